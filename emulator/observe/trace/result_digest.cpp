#include "emulator/observe/trace/result_digest.hpp"

namespace padlock::emu::trace {

namespace {
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull, kFnvPrime = 0x100000001b3ull;
constexpr uint64_t kMaxDigestBytes = 64ull << 20;  // longer outputs: not digested
}  // namespace

void capture_results(PadlockEvent& ev, GuestMemory& mem) {
  const MemSpan chain = ev.outcome.chain;
  ev.has_iv = chain.len == 16 && mem.accessible(chain.addr, 16, Access::Read) == 16 &&
              mem.read(chain.addr, ev.iv, 16);
  ev.result = ResultDigest{};
  const uint64_t addr = ev.outcome.output.addr, len = ev.outcome.output.len;
  if (len == 0 || len > kMaxDigestBytes) return;
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
