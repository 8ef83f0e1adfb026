#include "emulator/trace/output_region.hpp"

namespace padlock::emu::trace {

namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull, kFnvPrime = 0x100000001b3ull;
constexpr uint64_t kMaxDigestBytes = 64ull << 20;  // longer outputs: not digested

uint64_t mask(uint64_t v, unsigned addr_size) {
  return addr_size == 64 ? v : addr_size == 32 ? (v & 0xFFFFFFFFull) : (v & 0xFFFFull);
}

bool region(const PadlockEvent& ev, GuestMemory& mem, uint64_t& addr, uint64_t& len) {
  const unsigned asz = ev.d.addr_size;
  const int di = static_cast<int>(Gpr::DI);
  switch (ev.d.id) {
    case isa::InsnId::Xstore:
    case isa::InsnId::RepXstore:
    case isa::InsnId::XcryptEcb:
    case isa::InsnId::XcryptCbc:
    case isa::InsnId::XcryptCtr:
    case isa::InsnId::XcryptCfb:
    case isa::InsnId::XcryptOfb:
      addr = mask(ev.in[di], asz);
      len = mask(mask(ev.out[di], asz) - addr, asz);
      if (len == 0 && isa::is_xcrypt(ev.d.id) && ev.outcome.bytes != 0) len = 16;  // DGEST
      return len != 0;
    case isa::InsnId::Xsha1:
      addr = mask(ev.in[di], asz);
      len = 20;
      return true;
    case isa::InsnId::Xsha256:
      addr = mask(ev.in[di], asz);
      len = 32;
      return true;
    case isa::InsnId::Montmul: {
      // §5.1: the context holds 32-bit pointers; ECX is the full 32-bit register.
      const uint64_t ctx = mask(ev.in[static_cast<int>(Gpr::SI)], asz);
      uint32_t t = 0;
      if (mem.accessible(ctx + 12, 4, Access::Read) < 4 || !mem.read(ctx + 12, &t, 4)) {
        return false;
      }
      addr = t;
      len = (ev.in[static_cast<int>(Gpr::CX)] & 0xFFFFFFFFull) / 8 + 16;
      return true;
    }
    case isa::InsnId::Count:
      break;
  }
  return false;
}

}  // namespace

void capture_results(PadlockEvent& ev, GuestMemory& mem) {
  ev.has_iv = false;
  if (isa::is_xcrypt(ev.d.id) && ev.d.id != isa::InsnId::XcryptEcb) {
    const uint64_t eax = mask(ev.out[static_cast<int>(Gpr::AX)], ev.d.addr_size);
    ev.has_iv = mem.accessible(eax, 16, Access::Read) == 16 && mem.read(eax, ev.iv, 16);
  }
  ev.result = ResultDigest{};
  uint64_t addr = 0, len = 0;
  if (!region(ev, mem, addr, len) || len > kMaxDigestBytes) return;
  if (mem.accessible(addr, len, Access::Read) < len) return;
  uint64_t h = kFnvOffset;
  uint8_t buf[4096];
  for (uint64_t done = 0; done < len;) {
    const uint64_t n = len - done < sizeof buf ? len - done : sizeof buf;
    if (!mem.read(addr + done, buf, n)) return;
    for (uint64_t i = 0; i < n; ++i) h = (h ^ buf[i]) * kFnvPrime;
    done += n;
  }
  ev.result = {true, addr, len, h};
}

}  // namespace padlock::emu::trace
