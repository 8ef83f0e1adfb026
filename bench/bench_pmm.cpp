// PMM model throughput: REP MONTMUL on 2048-bit operands executed by the model (decode +
// Padlock + PmmUnit on FlatMemory; GMP fast path and the forced word-serial path), beside
// GMP doing the same Montgomery product (mpz REDC) and a plain mpz_mul + mpz_mod.
#include <gmp.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "isa/decoder.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"
#include "models/pmm/montmul_core.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kMinSeconds = 0.4;
constexpr unsigned kBits = 2048;
constexpr unsigned kWords = kBits / 32;
constexpr uint64_t kCtx = 0x10000, kA = 0x100000, kB = 0x101000, kM = 0x102000, kT = 0x103000,
                   kScratch = 0x104000;

template <typename Fn>
double ops_per_second(Fn&& fn) {
  size_t iters = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    for (int i = 0; i < 16; ++i) fn();
    iters += 16;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < kMinSeconds);
  return iters / elapsed;
}

void put(padlock::FlatMemory& mem, uint64_t va, mpz_srcptr z) {
  std::vector<uint32_t> w(kWords, 0);
  size_t count = 0;
  mpz_export(w.data(), &count, -1, 4, 0, 0, z);
  std::memcpy(mem.host(va, 4 * kWords), w.data(), 4 * kWords);
}

}  // namespace

int main() {
  using namespace padlock;
  gmp_randstate_t rs;
  gmp_randinit_mt(rs);
  gmp_randseed_ui(rs, 2048);
  mpz_t a, b, m, r, minv, t, u, ab;
  mpz_inits(a, b, m, r, minv, t, u, ab, nullptr);
  mpz_urandomb(m, rs, kBits);
  mpz_setbit(m, kBits - 1);
  mpz_setbit(m, 0);
  mpz_urandomm(a, rs, m);
  mpz_urandomm(b, rs, m);
  mpz_setbit(r, kBits);
  mpz_invert(minv, m, r);
  mpz_sub(minv, r, minv);  // -M^-1 mod R

  const CpuModel& cpu = *find_cpu_model("esther-c5j");
  Padlock pl(cpu);
  FlatMemory mem;
  mem.map(kCtx, 4096);
  mem.map(kA, 0x5000);
  put(mem, kA, a);
  put(mem, kB, b);
  put(mem, kM, m);
  const uint32_t m0 = static_cast<uint32_t>(mpz_getlimbn(m, 0));
  uint32_t inv = 1;
  for (int i = 0; i < 5; ++i) inv *= 2 - m0 * inv;
  const uint32_t ctx[6] = {0u - inv,     uint32_t(kA), uint32_t(kB),
                           uint32_t(kT), uint32_t(kM), uint32_t(kScratch)};
  std::memcpy(mem.host(kCtx, 24), ctx, 24);
  const uint8_t bytes[] = {0xF3, 0x0F, 0xA6, 0xC0};
  const isa::Decoded d = isa::decode(bytes, sizeof bytes, isa::CpuMode::Protected32);
  ExecEnv env;
  ArchState s;
  uint64_t cycles = 0;
  auto model = [&] {
    std::memset(mem.host(kT, 4 * kWords + 16), 0, 4 * kWords + 16);  // §5.1: T starts zeroed
    s[Gpr::AX] = 0;
    s[Gpr::CX] = kBits;
    s[Gpr::SI] = kCtx;
    const Outcome o = pl.execute(d, s, mem, env);
    if (o.status != Status::Completed) std::abort();
    cycles = o.cycles;
  };
  const double model_fast = ops_per_second(model);
  montmul_force_word_serial(true);
  const double model_serial = ops_per_second(model);
  montmul_force_word_serial(false);

  // GMP: the same unreduced Montgomery product, T = (AB + ((AB mod R) * m' mod R) M) / R.
  const double gmp_redc = ops_per_second([&] {
    mpz_mul(ab, a, b);
    mpz_fdiv_r_2exp(u, ab, kBits);
    mpz_mul(u, u, minv);
    mpz_fdiv_r_2exp(u, u, kBits);
    mpz_addmul(ab, u, m);
    mpz_fdiv_q_2exp(t, ab, kBits);
  });
  const double gmp_mulmod = ops_per_second([&] {
    mpz_mul(ab, a, b);
    mpz_mod(t, ab, m);
  });

  std::printf("PMM model benchmark: REP MONTMUL, ECX = %u (cpu model %s)\n", kBits, cpu.name);
  std::printf("  model (GMP fast path)      %10.0f ops/s\n", model_fast);
  std::printf("  model (word-serial path)   %10.0f ops/s\n", model_serial);
  std::printf("  GMP mpz Montgomery (REDC)  %10.0f ops/s   model/GMP = %.2f\n", gmp_redc,
              model_fast / gmp_redc);
  std::printf("  GMP mpz_mul + mpz_mod      %10.0f ops/s   model/GMP = %.2f\n", gmp_mulmod,
              model_fast / gmp_mulmod);
  std::printf("  modelled guest: %llu clocks per REP MONTMUL = %.0f ops/s at %.0f MHz\n",
              static_cast<unsigned long long>(cycles), cpu.default_mhz.value * 1e6 / cycles,
              cpu.default_mhz.value);
  mpz_clears(a, b, m, r, minv, t, u, ab, nullptr);
  gmp_randclear(rs);
  return 0;
}
