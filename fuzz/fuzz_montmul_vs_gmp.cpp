// libFuzzer target, differential: REP MONTMUL (models/pmm, through Padlock::execute as the
// emulator runs it) against GMP's mpz arithmetic on the same operands, with interrupts at
// fuzzed cycles (each resume continues from the registers and T, §1.7, §5.1).
// Input: byte 0 selects the model (bit 0: esther / nano), whether mZeroPrime is the correct
// -M^-1 mod 2^32 (bit 1 clear) or bytes 2..5 of the input (bit 1 set), and the interrupt
// spacing (bits 2..7, x 4096 clocks; 0 = none); byte 1 the size (ECX = 256 + 128 * (byte 1
// mod 31) bits); the rest fills M (made odd), A and B, repeating.
// Oracle: T is the hardware recurrence of §5.1 / §6.5 computed with mpz (per 32-bit word b
// of B: u = (T0 + A0 * b) * mZeroPrime mod 2^32, T = (T + A * b + u * M) / 2^32); with a
// correct mZeroPrime also T * 2^[ECX] = A * B (mod M); ECX = EDX = 0 and ESI unchanged at
// the end (§5.1).
#include <gmp.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"

using namespace padlock;

namespace {

constexpr uint64_t kCtx = 0x10000, kA = 0x100000, kB = 0x102000, kM = 0x104000, kT = 0x106000,
                   kScratch = 0x10A000;

// The operands' memory: the context page and A, B, M, T, each rewritten for every input.
FlatMemory& memory() {
  static FlatMemory* const m = [] {
    auto* f = new FlatMemory;
    f->map(kCtx, 4096);
    f->map(0x100000, 0x10000);
    return f;
  }();
  return *m;
}

// RAII mpz holder.
struct Mpz {
  mpz_t v;
  Mpz() { mpz_init(v); }
  ~Mpz() { mpz_clear(v); }
  Mpz(const Mpz&) = delete;
  Mpz& operator=(const Mpz&) = delete;
};

void put(uint64_t va, const std::vector<uint32_t>& w) {
  std::memcpy(memory().host(va, 4 * w.size()), w.data(), 4 * w.size());
}

void import_words(mpz_t z, const uint32_t* w, size_t n) {
  mpz_import(z, n, -1, 4, 0, 0, w);
}

uint32_t inverse_mod_2_32(uint32_t x) {  // x odd; Newton's iteration doubles the bits
  uint32_t inv = 1;
  for (int i = 0; i < 5; ++i) inv *= 2 - x * inv;
  return inv;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6) return 0;
  static Padlock esther(*find_cpu_model("esther-c5j")), nano(*find_cpu_model("nano"));
  Padlock& unit = (data[0] & 1) ? nano : esther;
  FlatMemory& mem = memory();
  const bool fuzzed_mzp = (data[0] & 2) != 0;
  const uint64_t spacing = static_cast<uint64_t>(data[0] >> 2) * 4096;
  const unsigned bits = 256 + 128 * (data[1] % 31);
  const unsigned n = bits / 32;
  const uint8_t* fill = data + 2;
  const size_t fill_len = size - 2;

  std::vector<uint32_t> m(n), a(n), b(n);
  size_t at = 0;
  auto next = [&]() {
    uint32_t w = 0;
    for (int i = 0; i < 4; ++i) w = (w << 8) | fill[at++ % fill_len];
    return w;
  };
  for (uint32_t& w : m) w = next();
  for (uint32_t& w : a) w = next();
  for (uint32_t& w : b) w = next();
  m[0] |= 1;  // §6.4: M odd
  uint32_t mzp = 0u - inverse_mod_2_32(m[0]);
  if (fuzzed_mzp) std::memcpy(&mzp, fill, 4);

  put(kA, a);
  put(kB, b);
  put(kM, m);
  std::memset(mem.host(kT, 4 * n + 16), 0, 4 * n + 16);
  const uint32_t ctx[6] = {mzp,          uint32_t(kA), uint32_t(kB),
                           uint32_t(kT), uint32_t(kM), uint32_t(kScratch)};
  std::memcpy(mem.host(kCtx, sizeof ctx), ctx, sizeof ctx);
  ArchState s;
  s[Gpr::AX] = 0;
  s[Gpr::CX] = bits;
  s[Gpr::DX] = 0x5A5A5A5A;
  s[Gpr::SI] = kCtx;
  const uint8_t insn[4] = {0xF3, 0x0F, 0xA6, 0xC0};
  const isa::Decoded d = isa::decode(insn, 4, isa::CpuMode::Protected32);
  ExecEnv env;
  for (int resumes = 0;; ++resumes) {
    if (spacing != 0) env.interrupt_at = env.now + spacing;
    const Outcome o = unit.execute(d, s, mem, env);
    env.now += o.cycles + 1;
    if (o.status == Status::Completed) break;
    if (o.status != Status::Interrupted || resumes > 1 << 20) __builtin_trap();
  }
  if (s[Gpr::CX] != 0 || s[Gpr::DX] != 0 || s[Gpr::SI] != kCtx) __builtin_trap();

  Mpz A, B, M, T, want, x;
  import_words(A.v, a.data(), n);
  import_words(B.v, b.data(), n);
  import_words(M.v, m.data(), n);
  import_words(T.v, reinterpret_cast<const uint32_t*>(mem.host(kT, 4 * n + 16)), n + 4);
  // The recurrence, word by word of B.
  for (unsigned k = 0; k < n; ++k) {
    const uint32_t t0 = static_cast<uint32_t>(mpz_get_ui(want.v));
    const uint32_t u = (t0 + a[0] * b[k]) * mzp;
    mpz_addmul_ui(want.v, A.v, b[k]);
    mpz_addmul_ui(want.v, M.v, u);
    mpz_fdiv_q_2exp(want.v, want.v, 32);
  }
  if (mpz_cmp(T.v, want.v) != 0) __builtin_trap();
  if (!fuzzed_mzp) {
    // T * 2^bits == A * B (mod M).
    mpz_mul_2exp(x.v, T.v, bits);
    mpz_mod(x.v, x.v, M.v);
    mpz_mul(want.v, A.v, B.v);
    mpz_mod(want.v, want.v, M.v);
    if (mpz_cmp(x.v, want.v) != 0) __builtin_trap();
  }
  return 0;
}
