// --check: the PadLock checker. It watches every executed PadLock instruction through the
// execution core's record (observe/padlock_record.hpp) and turns what it sees into
// findings (finding.hpp): the units' diagnostics (Outcome::diags) and the misuses only a
// view across instructions shows, above all a REP XCRYPT that runs with EFLAGS[30] = 1
// while the control word or key in memory is not what the engine loaded (§1.8).
// Normal instructions cost a few compares; the key shadow is a copy of at most 256 bytes
// when the engine reloads. docs/checker.md lists the kinds.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "emulator/observe/check/finding.hpp"
#include "emulator/observe/padlock_record.hpp"
#include "models/cpu_model.hpp"

namespace padlock::emu::check {

// Where guest code comes from: function, source file and line of an address. The checker
// asks at most once per frame, when the run ends. (The ELF-symbol implementation is
// source_lookup.hpp; a DWARF one can replace it behind this interface.)
class SourceLookup {
 public:
  virtual ~SourceLookup() = default;
  // Fills function, file and line of each frame's pc as far as known (one call for all).
  virtual void locate(Frame* const* frames, size_t n) = 0;
  // Whether `pc` lies in a loaded object's code (the backtrace's stack scan asks).
  virtual bool is_code(uint64_t pc) = 0;
  // The entry of the function holding `pc`; 0 when unknown.
  virtual uint64_t function_entry(uint64_t pc) = 0;
  // A token for the code mapped at `pc` now, noted in each frame, with which locate()
  // looks in that code even if the guest unmapped it before the run ended; UINT32_MAX
  // when the lookup keeps none.
  virtual uint32_t object_at(uint64_t /*pc*/) { return UINT32_MAX; }
};

class Checker final : public PadlockListener {
 public:
  // `lookup` may be null (no backtrace, no symbols); it must outlive the checker.
  Checker(const CpuModel& cpu, bool guest64, SourceLookup* lookup);

  void on_padlock(const PadlockRecord& r, GuestMemory& mem) override;
  // A WRMSR of a PadLock MSR by ring-0 code the harness runs (§1.5, §2.2): each diagnostic
  // the model raised (bit i: Diag(i)) is a finding at `pc` (the instruction, or the stub
  // the write came through), with the backtrace from `sp`. Its instruction is InsnId::Count.
  void on_msr_write(uint32_t msr, uint64_t value, uint32_t diags, uint64_t pc, uint64_t sp,
                    GuestMemory& mem);

  // Symbolizes the frames of the findings raised since the last call.
  void finish();

  const std::vector<Finding>& findings() const { return findings_; }
  bool has_error() const;

 private:
  // The finding of `kind` at r.pc: counted; a new one also gets its backtrace. Returns the
  // finding when it is new (the caller then writes its detail), else null.
  Finding* raise(unsigned kind, const PadlockRecord& r, GuestMemory& mem);
  void check_xcrypt(const PadlockRecord& r, GuestMemory& mem);
  void check_xstore(const PadlockRecord& r, GuestMemory& mem);
  void check_fault(const PadlockRecord& r, GuestMemory& mem);
  void backtrace(Finding& f, const PadlockRecord& r, GuestMemory& mem);

  const CpuModel& cpu_;
  const CpuModel* nano_;  // the part whose input prefetch is the widest (§3.1)
  bool guest64_;
  SourceLookup* lookup_;
  uint64_t seq_ = 0;
  std::vector<Finding> findings_;
  std::unordered_map<uint64_t, size_t> index_;  // (pc, kind) -> findings_
  size_t located_ = 0;                          // findings_[0, located_) are symbolized

  // What the engine loaded the last time EFLAGS[30] was 0 (§1.8).
  struct Loaded {
    bool valid = false;
    uint64_t cw_addr = 0, key_addr = 0;
    unsigned key_len = 0;
    uint8_t cw[16] = {};
    uint8_t key[256] = {};
  } loaded_;
};

}  // namespace padlock::emu::check
