// i386 signal frames (struct sigframe_ia32 and rt_sigframe_ia32 of Linux).
#include "emulator/linux/signal/signal_frame.hpp"

#include <cstring>
#include <vector>

#include "emulator/linux/abi_structs.hpp"
#include "emulator/linux/process.hpp"

namespace padlock::emu {

namespace {

// struct sigcontext_32 (88 bytes).
enum ScOffset : size_t {
  kScGs = 0,
  kScFs = 4,
  kScEs = 8,
  kScDs = 12,
  kScEdi = 16,
  kScEsi = 20,
  kScEbp = 24,
  kScEsp = 28,
  kScEbx = 32,
  kScEdx = 36,
  kScEcx = 40,
  kScEax = 44,
  kScTrapno = 48,
  kScErr = 52,
  kScEip = 56,
  kScCs = 60,
  kScEflags = 64,
  kScEspAtSignal = 68,
  kScSs = 72,
  kScFpstate = 76,
  kScOldmask = 80,
  kScCr2 = 84,
  kScSize = 88,
};
// struct _fpstate_32: a legacy FSAVE-style header, then the FXSAVE image at 112.
constexpr size_t kFpstateSize = 624, kFpstateFxsr = 112, kFpstateMagic = 110;
// struct sigframe_ia32.
constexpr size_t kSfSig = 4, kSfSc = 8, kSfExtramask = 8 + kScSize + kFpstateSize,
                 kSfRetcode = kSfExtramask + 4, kSfSize = kSfRetcode + 8;
// struct rt_sigframe_ia32 and struct ucontext_ia32.
constexpr size_t kRtSig = 4, kRtPinfo = 8, kRtPuc = 12, kRtInfo = 16, kRtUc = 144, kUcStack = 8,
                 kUcMcontext = 20, kUcSigmask = 20 + kScSize, kRtRetcode = kRtUc + kUcSigmask + 8,
                 kRtSize = kRtRetcode + 8;

// GPR indices in CpuContext::gpr (x86 encoding order).
enum { AX, CX, DX, BX, SP, BP, SI, DI };

void fill_sigcontext(uint8_t* sc, const CpuContext& ctx, const GuestSiginfo& si,
                     uint64_t saved_mask, uint32_t fpstate) {
  std::memset(sc, 0, kScSize);
  put_field<uint32_t>(sc, kScGs, ctx.gs);
  put_field<uint32_t>(sc, kScFs, ctx.fs);
  put_field<uint32_t>(sc, kScEs, ctx.es);
  put_field<uint32_t>(sc, kScDs, ctx.ds);
  const size_t regs[8] = {kScEax, kScEcx, kScEdx, kScEbx, kScEsp, kScEbp, kScEsi, kScEdi};
  for (int i = 0; i < 8; ++i) put_field<uint32_t>(sc, regs[i], static_cast<uint32_t>(ctx.gpr[i]));
  put_field<uint32_t>(sc, kScTrapno, static_cast<uint32_t>(si.trapno));
  put_field<uint32_t>(sc, kScErr, static_cast<uint32_t>(si.error_code));
  put_field<uint32_t>(sc, kScEip, static_cast<uint32_t>(ctx.ip));
  put_field<uint32_t>(sc, kScCs, ctx.cs);
  // §1.8: storing EFLAGS clears bit 30 in the stored value.
  put_field<uint32_t>(sc, kScEflags, static_cast<uint32_t>(ctx.flags & ~(1ull << 30)));
  put_field<uint32_t>(sc, kScEspAtSignal, static_cast<uint32_t>(ctx.gpr[SP]));
  put_field<uint32_t>(sc, kScSs, ctx.ss);
  put_field<uint32_t>(sc, kScFpstate, fpstate);
  put_field<uint32_t>(sc, kScOldmask, static_cast<uint32_t>(saved_mask));
  put_field<uint32_t>(sc, kScCr2, si.trapno == 14 ? static_cast<uint32_t>(si.addr) : 0);
}

void fill_fpstate(uint8_t* fp, const CpuContext& ctx) {
  std::memset(fp, 0, kFpstateSize);
  const uint8_t* fx = ctx.fxsave;
  const uint16_t fcw = get_field<uint16_t>(fx, 0), fsw = get_field<uint16_t>(fx, 2);
  // Legacy header: control, status, full tag word, then ST(0..7) as 10-byte values.
  uint32_t tag = 0;
  for (int i = 0; i < 8; ++i) tag |= ((fx[4] >> i) & 1 ? 0u : 3u) << (2 * i);
  put_field<uint32_t>(fp, 0, 0xFFFF0000u | fcw);
  put_field<uint32_t>(fp, 4, 0xFFFF0000u | fsw);
  put_field<uint32_t>(fp, 8, 0xFFFF0000u | tag);
  for (int i = 0; i < 8; ++i) std::memcpy(fp + 28 + 10 * i, fx + 32 + 16 * i, 10);
  put_field<uint16_t>(fp, 108, fsw);               // status
  put_field<uint16_t>(fp, kFpstateMagic, 0x0000);  // X86_FXSR_MAGIC: FXSAVE data follows
  std::memcpy(fp + kFpstateFxsr, fx, 512);
}

void read_sigcontext(const uint8_t* sc, CpuContext& ctx) {
  const size_t regs[8] = {kScEax, kScEcx, kScEdx, kScEbx, kScEsp, kScEbp, kScEsi, kScEdi};
  for (int i = 0; i < 8; ++i) ctx.gpr[i] = get_field<uint32_t>(sc, regs[i]);
  ctx.ip = get_field<uint32_t>(sc, kScEip);
  const uint64_t saved = get_field<uint32_t>(sc, kScEflags);
  ctx.flags = (ctx.flags & ~kFixEflags) | (saved & kFixEflags);
  ctx.gs = get_field<uint16_t>(sc, kScGs);
  ctx.fs = get_field<uint16_t>(sc, kScFs);
  ctx.es = get_field<uint16_t>(sc, kScEs);
  ctx.ds = get_field<uint16_t>(sc, kScDs);
}

bool read_fpstate(Process& p, uint32_t fp, CpuContext& ctx) {
  if (fp == 0) {
    init_fpu_state(ctx);
    return true;
  }
  uint16_t magic;
  if (!p.user().get(fp + kFpstateMagic, magic)) return false;
  if (magic == 0xFFFF) {
    // Legacy FSAVE-only data: control, status, tag and the stack registers.
    uint8_t legacy[108];
    if (!p.user().read(fp, legacy, sizeof legacy)) return false;
    init_fpu_state(ctx);
    put_field<uint16_t>(ctx.fxsave, 0, get_field<uint16_t>(legacy, 0));
    put_field<uint16_t>(ctx.fxsave, 2, get_field<uint16_t>(legacy, 4));
    const uint32_t tag = get_field<uint32_t>(legacy, 8);
    uint8_t abridged = 0;
    for (int i = 0; i < 8; ++i) {
      if (((tag >> (2 * i)) & 3) != 3) abridged |= static_cast<uint8_t>(1u << i);
    }
    ctx.fxsave[4] = abridged;
    for (int i = 0; i < 8; ++i) std::memcpy(ctx.fxsave + 32 + 16 * i, legacy + 28 + 10 * i, 10);
    return true;
  }
  return p.user().read(fp + kFpstateFxsr, ctx.fxsave, 512);
}

}  // namespace

bool setup_frame_i386(Process& p, int sig, const GuestSiginfo& si, const GuestSigaction& act,
                      uint64_t saved_mask, CpuContext& ctx) {
  const bool rt = (act.flags & kSaSiginfo) != 0;
  SignalState& s = p.signals();
  const uint64_t orig_sp = ctx.gpr[SP] & 0xFFFFFFFFu;
  uint64_t sp = orig_sp;
  if ((act.flags & kSaOnstack) && s.altstack_flags != kSsDisable && !s.on_altstack(sp)) {
    sp = s.altstack_sp + s.altstack_size;
  }
  const uint64_t fp = (sp - kFpstateSize) & ~uint64_t{63};
  const size_t size = rt ? kRtSize : kSfSize;
  uint64_t frame = fp - size;
  frame = ((frame + 4) & ~uint64_t{15}) - 4;  // as after a call: (esp + 4) is 16-aligned
  if (!frame_stays_on_altstack(s, orig_sp, frame)) return false;

  std::vector<uint8_t> buf(fp + kFpstateSize - frame, 0);
  uint8_t* f = buf.data();
  fill_fpstate(f + (fp - frame), ctx);
  const uint32_t retcode = static_cast<uint32_t>(frame + (rt ? kRtRetcode : kSfRetcode));
  const uint32_t pretcode =
      (act.flags & kSaRestorer) ? static_cast<uint32_t>(act.restorer) : retcode;
  put_field<uint32_t>(f, 0, pretcode);
  if (rt) {
    put_field<int32_t>(f, kRtSig, sig);
    put_field<uint32_t>(f, kRtPinfo, static_cast<uint32_t>(frame + kRtInfo));
    put_field<uint32_t>(f, kRtPuc, static_cast<uint32_t>(frame + kRtUc));
    encode_siginfo(f + kRtInfo, false, si);
    uint8_t* uc = f + kRtUc;
    uint64_t ss_sp, ss_size;
    int ss_flags;
    altstack_for_frame(s, orig_sp, ss_sp, ss_flags, ss_size);
    put_field<uint32_t>(uc, kUcStack, static_cast<uint32_t>(ss_sp));
    put_field<int32_t>(uc, kUcStack + 4, ss_flags);
    put_field<uint32_t>(uc, kUcStack + 8, static_cast<uint32_t>(ss_size));
    fill_sigcontext(uc + kUcMcontext, ctx, si, saved_mask, static_cast<uint32_t>(fp));
    put_field<uint64_t>(uc, kUcSigmask, saved_mask);
    // movl $__NR_rt_sigreturn, %eax; int $0x80
    const uint8_t code[8] = {0xB8, 173, 0, 0, 0, 0xCD, 0x80, 0};
    std::memcpy(f + kRtRetcode, code, 8);
  } else {
    put_field<int32_t>(f, kSfSig, sig);
    fill_sigcontext(f + kSfSc, ctx, si, saved_mask, static_cast<uint32_t>(fp));
    put_field<uint32_t>(f, kSfExtramask, static_cast<uint32_t>(saved_mask >> 32));
    // popl %eax; movl $__NR_sigreturn, %eax; int $0x80
    const uint8_t code[8] = {0x58, 0xB8, 119, 0, 0, 0, 0xCD, 0x80};
    std::memcpy(f + kSfRetcode, code, 8);
  }
  if (!p.user().write(frame, buf.data(), buf.size())) return false;

  ctx.ip = act.handler & 0xFFFFFFFFu;
  ctx.gpr[SP] = frame;
  ctx.gpr[AX] = static_cast<uint64_t>(sig);
  ctx.gpr[DX] = rt ? frame + kRtInfo : 0;
  ctx.gpr[CX] = rt ? frame + kRtUc : 0;
  ctx.flags &= ~kHandlerClearFlags;
  ctx.ds = ctx.es = kUserDs;
  init_fpu_state(ctx);
  return true;
}

bool restore_frame_i386(Process& p, bool rt, CpuContext& ctx, uint64_t& mask) {
  const uint64_t esp = ctx.gpr[SP] & 0xFFFFFFFFu;
  uint8_t sc[kScSize];
  if (rt) {
    // The handler's RET popped pretcode: ESP is frame + 4.
    const uint64_t frame = esp - 4;
    const uint64_t uc = frame + kRtUc;
    if (!p.user().read(uc + kUcMcontext, sc, kScSize)) return false;
    if (!p.user().get(uc + kUcSigmask, mask)) return false;
    uint32_t st[3];
    if (p.user().read(uc + kUcStack, st, sizeof st)) {
      restore_altstack(p.signals(), get_field<uint32_t>(sc, kScEsp), st[0],
                       static_cast<int32_t>(st[1]), st[2]);
    }
  } else {
    // RET popped pretcode and the trampoline popped sig: ESP is frame + 8.
    const uint64_t frame = esp - 8;
    uint32_t extramask;
    if (!p.user().read(frame + kSfSc, sc, kScSize)) return false;
    if (!p.user().get(frame + kSfExtramask, extramask)) return false;
    mask = get_field<uint32_t>(sc, kScOldmask) | (uint64_t{extramask} << 32);
  }
  read_sigcontext(sc, ctx);
  return read_fpstate(p, get_field<uint32_t>(sc, kScFpstate), ctx);
}

}  // namespace padlock::emu
