// Linux signal frames for i386 (sigframe, rt_sigframe) and x86-64 (rt_sigframe), laid out
// as arch/x86/include/asm/sigframe.h and uapi/asm/sigcontext.h define them, so a handler
// can read the interrupted registers through its ucontext and sigreturn restores them.
#pragma once

#include <cstdint>

#include "emulator/cpu/cpu.hpp"
#include "emulator/linux/signal/signals.hpp"

namespace padlock::emu {

class Process;

// Writes the frame for `sig` on the guest stack (or the alternate stack) and turns `ctx`
// (the interrupted state, saved into the frame) into the handler's entry state.
// Returns false if the frame cannot be written.
bool setup_frame_i386(Process& p, int sig, const GuestSiginfo& si, const GuestSigaction& act,
                      uint64_t saved_mask, CpuContext& ctx);
bool setup_frame_x86_64(Process& p, int sig, const GuestSiginfo& si, const GuestSigaction& act,
                        uint64_t saved_mask, CpuContext& ctx);

// Reads the frame of a returning handler and turns `ctx` (the state at the sigreturn
// system call) into the interrupted state; `mask` receives the saved signal mask.
bool restore_frame_i386(Process& p, bool rt, CpuContext& ctx, uint64_t& mask);
bool restore_frame_x86_64(Process& p, CpuContext& ctx, uint64_t& mask);

// Shared pieces.
void encode_siginfo(uint8_t out[128], bool wide, const GuestSiginfo& si);
void init_fpu_state(CpuContext& ctx);  // the FPU state a handler starts with
// EFLAGS bits sigreturn may restore (Linux FIX_EFLAGS): never bit 30 (§1.8: no
// instruction that loads EFLAGS sets EFLAGS[30]).
inline constexpr uint64_t kFixEflags = 0x50DD5;
inline constexpr uint64_t kHandlerClearFlags = 0x10500;  // TF, DF, RF
// The altstack description saved in uc_stack.
void altstack_for_frame(const SignalState& s, uint64_t sp, uint64_t& ss_sp, int& flags,
                        uint64_t& size);
// Linux's get_sigframe: a signal that arrives on the alternate stack gets its frame there
// or not at all (the frame at `frame` would run off the stack: the delivery fails, which
// kills the process with SIGSEGV rather than let the frame overwrite what lies below).
inline bool frame_stays_on_altstack(const SignalState& s, uint64_t orig_sp, uint64_t frame) {
  return !s.on_altstack(orig_sp) || s.on_altstack(frame);
}
// rt_sigreturn restores the alternate stack from uc_stack (errors ignored, as Linux does).
void restore_altstack(SignalState& s, uint64_t sp_now, uint64_t ss_sp, int flags, uint64_t size);

}  // namespace padlock::emu
