// PMM: REP MONTMUL (guide §5.1, §5.2; faults §1.7; EFLAGS[30] §1.8: neither read nor
// written). The behaviour chosen where the guide is silent is in docs/fidelity/pmm.md.
#include "models/pmm/pmm_unit.hpp"

#include <limits>

#include "models/pmm/montmul_core.hpp"
#include "models/pmm/pmm_timing.hpp"

namespace padlock {

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "big integers are copied as host words (§5.1 little-endian format)");

// §5.1 "Number of bits in the big integers: ECX".
constexpr uint32_t kMinBits = 256;
constexpr uint32_t kMaxBits = 32768;
constexpr uint32_t kBitStep = 128;
// §5.1 "Pointer to Montgomery context": mZeroPrime, A, B, T, M, Scratch, 32 bits each.
constexpr uint64_t kContextBytes = 24;
constexpr uint64_t kScratchBytes = 32;  // uint_32[8]
constexpr uint64_t kAlign = 16;         // §5.1 "Memory formats"

// EAX restart state (§5.1 "REP MONTMUL state: EAX"; the encoding is ours): bits 15:0 the
// outer passes completed (1 .. ECX/32 - 1), bits 17:16 the inner-loop extension words.
constexpr uint32_t kStatePassMask = 0xFFFF;
constexpr unsigned kStateExtShift = 16;
constexpr uint32_t kStateExtMask = 0x3;

struct Buffers {
  alignas(64) uint32_t a[kMontmulMaxWords];
  alignas(64) uint32_t b[kMontmulMaxWords];
  alignas(64) uint32_t m[kMontmulMaxWords];
  alignas(64) uint32_t t[kMontmulMaxWords + kMontmulExtraWords];
};
thread_local Buffers g_buffers;

// Charges each outer pass and decides whether an interrupt stops the loop after it (§5.1:
// interruptible in the outer loop; the pass just completed counts as progress).
struct PassClock {
  double pass[kMontmulExtraWords];  // clocks of a pass with an inner loop of n + i words
  double clocks;
  double due_at;  // interrupt_due(round(clocks)) <=> clocks >= due_at
  unsigned n;
  unsigned passes;
};

bool charge_pass(void* p, unsigned len_used) {
  auto& c = *static_cast<PassClock*>(p);
  c.clocks += c.pass[len_used - c.n];
  ++c.passes;
  return c.clocks >= c.due_at;
}

Outcome fault(FaultKind kind, uint64_t address, bool write) {
  Outcome o;
  o.status = Status::Faulted;
  o.fault = {kind, address, write};
  return o;
}

}  // namespace

PmmUnit::PmmUnit(const CpuModel& cpu) : cpu_(cpu) {}

Outcome PmmUnit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  // Nano: in 64-bit mode the 32-bit context pointers need the 67h prefix.
  if (d.addr_size == 64 && cpu_.pmm.needs_addr_prefix_in_64bit) {
    env.report(Diag::MontmulAddr64);
    return Outcome::fault_ud();
  }
  // §5.1 "REP prefix": the full 32-bit EAX and ECX, whatever the prefixes.
  const uint32_t ecx = static_cast<uint32_t>(s[Gpr::CX]);
  const uint32_t eax = static_cast<uint32_t>(s[Gpr::AX]);
  if (ecx < kMinBits || ecx > kMaxBits || ecx % kBitStep != 0) {
    env.report(Diag::MontmulBadEcx);
    return fault(FaultKind::GeneralProtection, 0, false);
  }
  const unsigned n = ecx / 32;
  unsigned first_pass = 0;
  unsigned len = n;
  if (eax != 0) {
    const unsigned pass = eax & kStatePassMask;
    const unsigned ext = (eax >> kStateExtShift) & kStateExtMask;
    if ((eax & ~((kStateExtMask << kStateExtShift) | kStatePassMask)) != 0 || pass == 0 ||
        pass >= n) {
      env.report(Diag::MontmulBadState);
      return fault(FaultKind::GeneralProtection, 0, false);
    }
    first_pass = pass;
    len = n + ext;
  }

  // §5.1 "An address-size prefix affects the size of ESI"; ESI need not be aligned.
  const uint64_t esi = reg_get(s, Gpr::SI, d.addr_size);
  if (const uint64_t ok = mem.accessible(esi, kContextBytes, Access::Read); ok < kContextBytes) {
    return fault(FaultKind::PageFault, esi + ok, false);
  }
  uint32_t context[6];
  mem.read(esi, context, kContextBytes);
  const uint32_t m_zero_prime = context[0];
  const uint64_t a_addr = context[1], b_addr = context[2], t_addr = context[3];
  const uint64_t m_addr = context[4], scratch_addr = context[5];

  // §5.1: A, B, T, M and Scratch must be 16-byte aligned; we raise #GP (context order).
  for (const uint64_t p : {a_addr, b_addr, t_addr, m_addr, scratch_addr}) {
    if (p % kAlign != 0) return fault(FaultKind::GeneralProtection, p, false);
  }
  // §1.7: every buffer is tested before anything is calculated or changed; T with its extra
  // 128 bits (§5.1 NOTES).
  const uint64_t bytes = ecx / 8;
  const uint64_t t_bytes = bytes + 4 * kMontmulExtraWords;
  const struct {
    uint64_t va, len;
    Access access;
  } probes[] = {{a_addr, bytes, Access::Read},
                {b_addr, bytes, Access::Read},
                {t_addr, t_bytes, Access::Read},
                {t_addr, t_bytes, Access::Write},
                {m_addr, bytes, Access::Read},
                {scratch_addr, kScratchBytes, Access::Read},
                {scratch_addr, kScratchBytes, Access::Write}};
  for (const auto& p : probes) {
    if (const uint64_t ok = mem.accessible(p.va, p.len, p.access); ok < p.len) {
      return fault(FaultKind::PageFault, p.va + ok, p.access == Access::Write);
    }
  }

  Buffers& buf = g_buffers;
  mem.read(a_addr, buf.a, bytes);
  mem.read(b_addr, buf.b, bytes);
  mem.read(m_addr, buf.m, bytes);
  mem.read(t_addr, buf.t, t_bytes);
  if (eax == 0) {
    for (unsigned i = 0; i < n + kMontmulExtraWords; ++i) {
      if (buf.t[i] != 0) {
        env.report(Diag::MontmulTNotZero);  // §5.1: "initially must be all zero"
        break;
      }
    }
  }

  MontmulJob job;
  job.n = n;
  job.a = buf.a;
  job.b = buf.b;
  job.m = buf.m;
  job.m_zero_prime = m_zero_prime;
  job.t = buf.t;
  job.len = len;

  const PmmTiming timing = PmmTiming::from(cpu_.pmm);
  PassClock clock{};
  for (unsigned i = 0; i < kMontmulExtraWords; ++i)
    clock.pass[i] = timing.pass_clocks(n, n + i, t_addr);
  clock.clocks = timing.k2;
  clock.n = n;
  // llround(x) >= k  <=>  x >= k - 0.5 for x >= 0.
  if (env.interrupt_at == std::numeric_limits<uint64_t>::max()) {
    clock.due_at = std::numeric_limits<double>::infinity();
  } else if (env.interrupt_at <= env.now) {
    clock.due_at = 0;
  } else {
    clock.due_at = static_cast<double>(env.interrupt_at - env.now) - 0.5;
  }
  const bool fast = !montmul_word_serial_forced() && montmul_fast_applies(job);
  const unsigned next = fast ? montmul_fast(job, first_pass, charge_pass, &clock)
                             : montmul_word_serial(job, first_pass, charge_pass, &clock);

  // §5.1: "The partial product is continuously updated in memory".
  mem.write(t_addr, buf.t, t_bytes);

  Outcome out;
  out.cycles = out.int_cycles = PmmTiming::round(clock.clocks);
  out.blocks = clock.passes;
  out.bytes = 4ull * clock.passes;  // words of B consumed
  if (next < n) {
    // §5.1: ECX unchanged, the restart state in EAX, EDX a temporary (the last quotient digit).
    reg_set(s, Gpr::AX, next | ((job.len - n) << kStateExtShift), 32);
    reg_set(s, Gpr::DX, job.last_u, 32);
    out.status = Status::Interrupted;
    return out;
  }
  // §5.1: at the end ECX = 0 and EDX = 0; EAX is undefined and we leave 0.
  reg_set(s, Gpr::CX, 0, 32);
  reg_set(s, Gpr::DX, 0, 32);
  reg_set(s, Gpr::AX, 0, 32);
  out.status = Status::Completed;
  return out;
}

// §5.1: the result is T (context word 3, a 32-bit pointer) with its 128 spare bits.
void PmmUnit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState&,
                           GuestMemory& mem, Outcome& o) {
  const uint64_t ctx = reg_get(before, Gpr::SI, d.addr_size);
  uint32_t t = 0;
  if (mem.accessible(ctx + 12, 4, Access::Read) < 4 || !mem.read(ctx + 12, &t, 4)) return;
  o.output = {t, (before[Gpr::CX] & 0xFFFFFFFFull) / 8 + 4 * kMontmulExtraWords};
}

}  // namespace padlock
