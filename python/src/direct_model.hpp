// The direct model API behind padlock_emu.Model: one CPU's PadLock units with a FlatMemory
// and an ArchState, so Python can run single PadLock instructions on buffers without an
// ELF or Unicorn. It adds no semantics: decoding is isa::decode, execution is the same core
// as the CLI's and the harness's (emulator/exec/core.hpp), and its clock is a
// VirtualTime of its own.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/exec/core.hpp"
#include "emulator/time/virtual_time.hpp"
#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"
#include "models/unit_interface.hpp"

namespace padlock::python {

// Raised when a set-up access (read/write) touches an unmapped page.
struct UnmappedAddress : std::out_of_range {
  using std::out_of_range::out_of_range;
};

struct DiagEvent {
  Diag id;
  uint64_t pc;
};

// What one execute() did: the model's Outcome, the decoder's view of the instruction,
// the clock when it started and every diagnostic the model reported.
struct Execution {
  Outcome outcome;
  isa::Decoded decoded;
  uint64_t start = 0;
  std::vector<DiagEvent> diagnostics;
};

class DirectModel final : private DiagnosticSink {
 public:
  // bits: 32 (protected mode) or 64 (long mode; the CPU model must support it). timing: by
  // default the units' clocks alone, as the guide's tables give them (everything in L1, one
  // instruction after another); {true, true} charges as the CLI does with --timing on.
  DirectModel(const CpuModel& cpu, unsigned bits, const PadlockConfig& config, double mhz,
              const emu::PadlockTiming& timing = {false, false});

  const CpuModel& cpu() const { return padlock_.model(); }
  unsigned bits() const { return bits_; }
  isa::CpuMode mode() const {
    return bits_ == 64 ? isa::CpuMode::Long64 : isa::CpuMode::Protected32;
  }

  // Memory set-up. write/read ignore permissions (like a debugger) but need mapped pages.
  void map(uint64_t va, uint64_t len, uint8_t perm) { mem_.map(va, len, perm); }
  void protect(uint64_t va, uint64_t len, uint8_t perm) { mem_.protect(va, len, perm); }
  void write(uint64_t va, const std::string& bytes);
  std::string read(uint64_t va, uint64_t len);
  // Bytes accessible from va for `access`, as the models see them.
  uint64_t accessible(uint64_t va, uint64_t len, Access access) {
    return mem_.accessible(va, len, access);
  }

  ArchState& state() { return state_; }

  // The canonical encoding of a table row (REP where the row needs it, 67h when
  // addr_size differs from the mode's default), as a guest would contain it.
  std::string encode(isa::InsnId id, unsigned addr_size) const;

  // Decodes `bytes` with isa::decode in this mode and executes the result. A byte string
  // that is not a PadLock instruction raises std::invalid_argument.
  Execution execute_bytes(const std::string& bytes);
  Execution execute(isa::InsnId id, unsigned addr_size) {
    return execute_bytes(encode(id, addr_size));
  }

  // Virtual clock (cycles). execute() starts at now() and advances it by Outcome.cycles
  // (with the §3.3 overlap: by int_cycles, and the next PadLock instruction waits for ACE).
  uint64_t now() const { return vt_.now(); }
  void set_now(uint64_t c) { vt_.set_now(c); }
  void advance(uint64_t c) { vt_.advance(c); }
  // Cycle at which an external interrupt becomes pending (§1.7); UINT64_MAX = never.
  uint64_t interrupt_at = UINT64_MAX;
  double mhz() const { return vt_.mhz(); }
  uint64_t pc = 0x1000;  // reported with diagnostics

  Padlock& padlock() { return padlock_; }
  ExecEnv env();

 private:
  void report(Diag d, uint64_t pc) override { pending_.push_back({d, pc}); }

  unsigned bits_;
  FlatMemory mem_;
  ArchState state_;
  Padlock padlock_;
  emu::VirtualTime vt_;
  emu::Stats stats_;
  emu::PadlockCore core_;
  std::vector<DiagEvent> pending_;
};

}  // namespace padlock::python
