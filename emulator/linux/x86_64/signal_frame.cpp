// x86-64 signal frames (struct rt_sigframe of Linux) and the pieces shared with i386.
#include "emulator/linux/signal/signal_frame.hpp"

#include <cstring>
#include <vector>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"

namespace padlock::emu {

namespace {

// struct sigcontext_64 (256 bytes), by CpuContext::gpr index.
constexpr size_t kScGpr[16] = {104, 112, 96, 88, 120, 80, 72, 64,   // AX CX DX BX SP BP SI DI
                               0,   8,   16, 24, 32,  40, 48, 56};  // R8..R15
constexpr size_t kScRip = 128, kScEflags = 136, kScCs = 144, kScGs = 146, kScFs = 148, kScSs = 150,
                 kScErr = 152, kScTrapno = 160, kScOldmask = 168, kScCr2 = 176, kScFpstate = 184,
                 kScSize = 256;
// struct rt_sigframe: pretcode, struct ucontext (uc_flags, uc_link, uc_stack,
// uc_mcontext, uc_sigmask), struct siginfo.
constexpr size_t kUc = 8, kUcStack = kUc + 16, kUcMcontext = kUc + 40,
                 kUcSigmask = kUcMcontext + kScSize, kInfo = kUcSigmask + 8,
                 kFrameSize = kInfo + 128;
constexpr uint64_t kUcSigcontextSs = 2, kUcStrictRestoreSs = 4;
constexpr size_t kFxsaveSize = 512;
enum { AX, CX, DX, BX, SP, BP, SI, DI };

}  // namespace

void encode_siginfo(uint8_t out[128], bool wide, const GuestSiginfo& si) {
  std::memset(out, 0, 128);
  put_field<int32_t>(out, 0, si.signo);
  put_field<int32_t>(out, 4, si.err);
  put_field<int32_t>(out, 8, si.code);
  const size_t u = wide ? 16 : 12;  // the union follows, pointer-aligned
  if (si.code == kSiUser || si.code == kSiTkill || si.code < 0) {
    put_field<int32_t>(out, u, si.pid);
    put_field<int32_t>(out, u + 4, si.uid);
  } else if (si.code != kSiKernel) {
    if (wide)
      put_field<uint64_t>(out, u, si.addr);
    else
      put_field<uint32_t>(out, u, static_cast<uint32_t>(si.addr));
  }
}

void init_fpu_state(CpuContext& ctx) {
  std::memset(ctx.fxsave, 0, sizeof ctx.fxsave);
  put_field<uint16_t>(ctx.fxsave, 0, 0x037F);   // FNINIT control word
  put_field<uint32_t>(ctx.fxsave, 24, 0x1F80);  // MXCSR default
  put_field<uint32_t>(ctx.fxsave, 28, 0xFFFF);  // MXCSR_MASK
}

void altstack_for_frame(const SignalState& s, uint64_t sp, uint64_t& ss_sp, int& flags,
                        uint64_t& size) {
  ss_sp = s.altstack_sp;
  size = s.altstack_size;
  flags = s.altstack_flags == kSsDisable ? kSsDisable : (s.on_altstack(sp) ? kSsOnstack : 0);
}

void restore_altstack(SignalState& s, uint64_t sp_now, uint64_t ss_sp, int flags, uint64_t size) {
  if (s.on_altstack(sp_now)) return;  // cannot change the stack we are on
  if (flags & kSsDisable) {
    s.altstack_flags = kSsDisable;
    s.altstack_sp = s.altstack_size = 0;
  } else if (size >= 2048) {
    s.altstack_flags = 0;
    s.altstack_sp = ss_sp;
    s.altstack_size = size;
  }
}

bool setup_frame_x86_64(Process& p, int sig, const GuestSiginfo& si, const GuestSigaction& act,
                        uint64_t saved_mask, CpuContext& ctx) {
  // The x86-64 ABI has no trampoline on the stack: the C library's restorer is required.
  if (!(act.flags & kSaRestorer)) return false;
  SignalState& s = p.signals();
  const uint64_t orig_sp = ctx.gpr[SP];
  uint64_t sp = orig_sp;
  if ((act.flags & kSaOnstack) && s.altstack_flags != kSsDisable && !s.on_altstack(sp)) {
    sp = s.altstack_sp + s.altstack_size;
  } else {
    sp -= 128;  // the red zone
  }
  const uint64_t fp = (sp - kFxsaveSize) & ~uint64_t{63};
  uint64_t frame = ((fp - kFrameSize) & ~uint64_t{15}) - 8;  // as after a call
  if (!frame_stays_on_altstack(s, orig_sp, frame)) return false;

  std::vector<uint8_t> buf(fp + kFxsaveSize - frame, 0);
  uint8_t* f = buf.data();
  std::memcpy(f + (fp - frame), ctx.fxsave, kFxsaveSize);
  put_field<uint64_t>(f, 0, act.restorer);
  put_field<uint64_t>(f, kUc, kUcSigcontextSs | kUcStrictRestoreSs);
  uint64_t ss_sp, ss_size;
  int ss_flags;
  altstack_for_frame(s, orig_sp, ss_sp, ss_flags, ss_size);
  put_field<uint64_t>(f, kUcStack, ss_sp);
  put_field<int32_t>(f, kUcStack + 8, ss_flags);
  put_field<uint64_t>(f, kUcStack + 16, ss_size);
  uint8_t* sc = f + kUcMcontext;
  for (int i = 0; i < 16; ++i) put_field<uint64_t>(sc, kScGpr[i], ctx.gpr[i]);
  put_field<uint64_t>(sc, kScRip, ctx.ip);
  // §1.8: storing EFLAGS clears bit 30 in the stored value.
  put_field<uint64_t>(sc, kScEflags, ctx.flags & ~(1ull << 30));
  put_field<uint16_t>(sc, kScCs, ctx.cs);
  put_field<uint16_t>(sc, kScGs, ctx.gs);
  put_field<uint16_t>(sc, kScFs, ctx.fs);
  put_field<uint16_t>(sc, kScSs, ctx.ss);
  put_field<uint64_t>(sc, kScErr, si.error_code);
  put_field<uint64_t>(sc, kScTrapno, static_cast<uint64_t>(si.trapno));
  put_field<uint64_t>(sc, kScOldmask, saved_mask);
  put_field<uint64_t>(sc, kScCr2, si.trapno == 14 ? si.addr : 0);
  put_field<uint64_t>(sc, kScFpstate, fp);
  put_field<uint64_t>(f, kUcSigmask, saved_mask);
  encode_siginfo(f + kInfo, true, si);
  if (!p.user().write(frame, buf.data(), buf.size())) return false;

  ctx.ip = act.handler;
  ctx.gpr[SP] = frame;
  ctx.gpr[DI] = static_cast<uint64_t>(sig);
  ctx.gpr[SI] = frame + kInfo;
  ctx.gpr[DX] = frame + kUc;
  ctx.gpr[AX] = 0;
  ctx.flags &= ~kHandlerClearFlags;
  init_fpu_state(ctx);
  return true;
}

bool restore_frame_x86_64(Process& p, CpuContext& ctx, uint64_t& mask) {
  // The handler's RET popped pretcode: RSP is frame + 8.
  const uint64_t frame = ctx.gpr[SP] - 8;
  uint8_t sc[kScSize];
  if (!p.user().read(frame + kUcMcontext, sc, kScSize)) return false;
  if (!p.user().get(frame + kUcSigmask, mask)) return false;
  for (int i = 0; i < 16; ++i) ctx.gpr[i] = get_field<uint64_t>(sc, kScGpr[i]);
  ctx.ip = get_field<uint64_t>(sc, kScRip);
  ctx.flags = (ctx.flags & ~kFixEflags) | (get_field<uint64_t>(sc, kScEflags) & kFixEflags);
  uint8_t st[24];
  if (p.user().read(frame + kUcStack, st, sizeof st)) {
    restore_altstack(p.signals(), ctx.gpr[SP], get_field<uint64_t>(st, 0),
                     get_field<int32_t>(st, 8), get_field<uint64_t>(st, 16));
  }
  const uint64_t fp = get_field<uint64_t>(sc, kScFpstate);
  if (fp == 0) {
    init_fpu_state(ctx);
    return true;
  }
  return p.user().read(fp, ctx.fxsave, kFxsaveSize);
}

}  // namespace padlock::emu
