// ACE and ACE2: REP XCRYPTECB/CBC/CTR/CFB/OFB with the EFLAGS[30] key cache
// (guide §3.1-§3.3, §1.7, §1.8, §6.6).
#pragma once

#include <cstdint>

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/state_io.hpp"
#include "models/unit_interface.hpp"

namespace padlock {

class AceUnit {
 public:
  explicit AceUnit(const CpuModel& cpu);
  ~AceUnit();
  AceUnit(const AceUnit&) = delete;
  AceUnit& operator=(const AceUnit&) = delete;

  // One REP XCRYPT (d.id is an XCRYPT row). The caller has checked that ACE exists and
  // is enabled, and that the prefixes are legal.
  Outcome execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem, const ExecEnv& env);
  // Fills o.input, o.output and o.chain: what the execution from `before` to `after` read
  // and wrote (called by Padlock::execute after execute()).
  static void report_spans(const isa::Decoded& d, const ArchState& before, const ArchState& after,
                           GuestMemory& mem, Outcome& o);

  // The Esther stepping-8 CTR erratum (§3.1, §6.6); defaults to the CPU model's flag.
  void set_ctr_errata(bool on);
  bool ctr_errata() const;

  // Host AES implementation (results are identical; tests run both). Auto prefers AES-NI.
  // Returns false, leaving the choice unchanged, when the host lacks the one asked for.
  enum class HostAes : uint8_t { Auto, Portable, AesNi };
  bool set_host_aes(HostAes which);
  const char* host_aes_name() const;

  // The key registers (the control word and schedules EFLAGS[30] = 1 reuses, §1.8) and
  // the erratum switch (Machine.snapshot()); the host AES choice stays.
  void save(StateWriter& w) const;
  void load(StateReader& r);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace padlock
