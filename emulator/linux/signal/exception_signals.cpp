#include "emulator/linux/signal/exception_signals.hpp"

#include <signal.h>

#include <array>

#include "emulator/linux/signal/signals.hpp"

namespace padlock::emu {

namespace {

// Linux's user-mode handling of each exception vector (arch/x86/kernel/traps.c); vectors
// not listed (#GP, #TS, INT n without a gate) are SIGSEGV with SI_KERNEL.
struct VectorRow {
  uint32_t vector;
  VectorSignal signal;
};
constexpr std::array<VectorRow, 11> kVectors = {{
    {0, {SIGFPE, kFpeIntdiv, true}},    // #DE
    {1, {SIGTRAP, kTrapTrace, true}},   // #DB
    {3, {SIGTRAP, kSiKernel, false}},   // #BP (int3)
    {4, {SIGSEGV, kSiKernel, false}},   // #OF (into)
    {5, {SIGSEGV, kSiKernel, false}},   // #BR (bound)
    {6, {SIGILL, kIllIllopn, true}},    // #UD
    {11, {SIGBUS, kSiKernel, false}},   // #NP
    {12, {SIGBUS, kSiKernel, false}},   // #SS
    {16, {SIGFPE, kFpeFltinv, true}},   // #MF
    {17, {SIGBUS, kBusAdraln, false}},  // #AC: do_trap with a NULL address
    {19, {SIGFPE, kFpeFltinv, true}},   // #XM
}};

}  // namespace

VectorSignal vector_signal(uint32_t vector) {
  for (const VectorRow& r : kVectors) {
    if (r.vector == vector) return r.signal;
  }
  return {SIGSEGV, kSiKernel, false};
}

FaultSignal padlock_fault_signal(const Fault& f, const AddressSpace& mem, uint64_t pc) {
  FaultSignal s;
  switch (f.kind) {
    case FaultKind::PageFault: {
      const bool mapped = (mem.flags(f.address) & kPageMapped) != 0;
      s.signo = SIGSEGV;
      s.code = mapped ? kSegvAccerr : kSegvMaperr;
      s.addr = f.address;
      s.trapno = 14;
      s.error_code = page_fault_error_code(f.write, mapped, false);
      break;
    }
    case FaultKind::GeneralProtection:
      s.signo = SIGSEGV;
      s.code = kSiKernel;  // Linux reports #GP with si_addr 0
      s.trapno = 13;
      break;
    case FaultKind::DeviceNotAvailable:
      // Only the function harness sets CR0.TS (ring-0 driver code); Linux has no signal for
      // a kernel #NM: SIGSEGV with the vector, as for #GP.
      s.signo = SIGSEGV;
      s.code = kSiKernel;
      s.trapno = 7;
      break;
    case FaultKind::InvalidOpcode:
    case FaultKind::NotModelled:  // the process stops first (Process::stop_not_modelled)
    case FaultKind::None:
      s.signo = SIGILL;
      s.code = kIllIllopn;
      s.addr = pc;
      s.trapno = 6;
      break;
  }
  return s;
}

}  // namespace padlock::emu
