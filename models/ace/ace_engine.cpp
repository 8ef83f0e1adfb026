#include "models/ace/ace_engine.hpp"

#include <algorithm>
#include <cstring>

#include "models/ace/ace_memory.hpp"

namespace padlock::ace {

namespace {

constexpr uint64_t kPage = 4096;
constexpr unsigned kMaxGroup = 16;

void apply(const Kernels& k, BlockJob& job, const uint8_t* in, uint8_t* out, uint64_t n) {
  const RoundKeys& rk = *job.keys;
  switch (job.mode) {
    case Mode::Ecb:
      (job.decrypt ? k.ecb_dec : k.ecb_enc)(rk, in, out, n);
      return;
    case Mode::Cbc:
      (job.decrypt ? k.cbc_dec : k.cbc_enc)(rk, job.iv, in, out, n, job.out_stride);
      return;
    case Mode::Cfb:
      (job.decrypt ? k.cfb_dec : k.cfb_enc)(rk, job.iv, in, out, n, job.out_stride);
      return;
    case Mode::Ofb:
      k.ofb(rk, job.iv, in, out, n);
      return;
    case Mode::Ctr:
      k.ctr(rk, job.iv, in, out, n);
      return;
  }
}

// Output ahead of the input: bulk kernels batch loads, so stores could overwrite input
// the hardware would already have read (or not yet). Such spans take the exact path.
bool stores_ahead_of_loads(const uint8_t* in, const uint8_t* out, uint64_t n) {
  const auto i = reinterpret_cast<uintptr_t>(in);
  const auto o = reinterpret_cast<uintptr_t>(out);
  return o > i && o < i + 16 * n;
}

// One input group (or the part of it inside [j, last)): load, compute, store. Out of line:
// inlined, its two buffers gave run_blocks' contiguous path a 584-byte frame to set up.
[[gnu::noinline]] void exact_group(const Kernels& k, GuestMemory& mem, BlockJob& job, uint64_t j,
                                   uint64_t n) {
  alignas(16) uint8_t in[16 * kMaxGroup];
  alignas(16) uint8_t out[16 * kMaxGroup];
  read_wrap(mem, ea_add(job.in, 16 * j, job.asz), in, 16 * n, job.asz);
  const unsigned stride = job.out_stride;
  apply(k, job, in, out, n);
  if (stride == 0) {
    // Digest mode: every block goes to EDI; the group's last one is what remains.
    write_wrap(mem, job.out, out, 16, job.asz);
  } else {
    write_wrap(mem, ea_add(job.out, 16 * j, job.asz), out, 16 * n, job.asz);
  }
}

}  // namespace

const Outcome kFreshOutcome{};

void run_blocks(const Kernels& k, GuestMemory& mem, BlockJob& job, uint64_t first, uint64_t last) {
  const unsigned asz = job.asz;
  const unsigned group = std::clamp(job.group, 1u, kMaxGroup);
  // A digest-mode (stride 0) output is written block by block to the same 16 bytes.
  const auto out_bytes = [&](uint64_t n) { return job.out_stride == 0 ? 16 : 16 * n; };
  uint64_t j = first;
  while (j < last) {
    const uint64_t in_ea = ea_add(job.in, 16 * j, asz);
    const uint64_t out_ea = ea_add(job.out, uint64_t(job.out_stride) * j, asz);
    uint64_t n = last - j;
    n = std::min(n, bytes_to_wrap(in_ea, asz) / 16);
    if (job.out_stride != 0)
      n = std::min(n, bytes_to_wrap(out_ea, asz) / 16);
    else if (bytes_to_wrap(out_ea, asz) < 16)
      n = 0;
    uint8_t* pin = nullptr;
    uint8_t* pout = nullptr;
    if (n > 0) {
      pin = mem.translate(in_ea, 16 * n, Access::Read);
      pout = mem.translate(out_ea, out_bytes(n), Access::Write);
      if (pin == nullptr || pout == nullptr) {
        // Host-discontiguous: retry up to the nearest page end of either stream.
        uint64_t m = (kPage - (in_ea & (kPage - 1))) / 16;
        if (job.out_stride != 0) m = std::min(m, (kPage - (out_ea & (kPage - 1))) / 16);
        n = std::min(n, m);
        if (n > 0) {
          pin = mem.translate(in_ea, 16 * n, Access::Read);
          pout = mem.translate(out_ea, out_bytes(n), Access::Write);
        }
      }
    }
    if (n > 0 && pin != nullptr && pout != nullptr && !stores_ahead_of_loads(pin, pout, n)) {
      apply(k, job, pin, pout, n);
      j += n;
      continue;
    }
    const uint64_t g = std::min<uint64_t>(last - j, group - j % group);
    exact_group(k, mem, job, j, g);
    j += g;
  }
}

}  // namespace padlock::ace
