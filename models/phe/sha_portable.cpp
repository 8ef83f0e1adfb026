// Portable FIPS 180-2 SHA-1 and SHA-256 compression, and the choice of backend.
#include <atomic>

#include "models/phe/sha_backend.hpp"
#include "models/phe/sha_constants.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace padlock {

#if defined(__x86_64__) || defined(__i386__)
// sha_x86.cpp (compiled with -msha -msse4.1 -mssse3).
void sha1_blocks_x86(uint32_t* state, const uint8_t* data, size_t blocks);
void sha256_blocks_x86(uint32_t* state, const uint8_t* data, size_t blocks);
#endif

namespace {

inline uint32_t rotl(uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}
inline uint32_t rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}
inline uint32_t load_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

void sha1_blocks_portable(uint32_t* state, const uint8_t* data, size_t blocks) {
  for (; blocks != 0; --blocks, data += 64) {
    // The message schedule in a 16-word ring, expanded as the rounds need it.
    uint32_t w[16];
    for (int t = 0; t < 16; ++t) w[t] = load_be32(data + 4 * t);
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
    auto word = [&w](int t) {
      if (t < 16) return w[t];
      w[t & 15] = rotl(w[(t - 3) & 15] ^ w[(t - 8) & 15] ^ w[(t - 14) & 15] ^ w[t & 15], 1);
      return w[t & 15];
    };
    auto step = [&](uint32_t f, uint32_t k, uint32_t wt) {
      const uint32_t tmp = rotl(a, 5) + f + e + k + wt;
      e = d;
      d = c;
      c = rotl(b, 30);
      b = a;
      a = tmp;
    };
    for (int t = 0; t < 20; ++t) step((b & c) | (~b & d), 0x5A827999, word(t));
    for (int t = 20; t < 40; ++t) step(b ^ c ^ d, 0x6ED9EBA1, word(t));
    for (int t = 40; t < 60; ++t) step((b & c) | (b & d) | (c & d), 0x8F1BBCDC, word(t));
    for (int t = 60; t < 80; ++t) step(b ^ c ^ d, 0xCA62C1D6, word(t));
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
  }
}

void sha256_blocks_portable(uint32_t* state, const uint8_t* data, size_t blocks) {
  for (; blocks != 0; --blocks, data += 64) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t) w[t] = load_be32(data + 4 * t);
    for (int t = 16; t < 64; ++t) {
      const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; ++t) {
      const uint32_t t1 =
          h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kSha256K[t] + w[t];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

constexpr ShaBackend kPortable = {"portable", sha1_blocks_portable, sha256_blocks_portable};

#if defined(__x86_64__) || defined(__i386__)
constexpr ShaBackend kHost = {"x86-sha", sha1_blocks_x86, sha256_blocks_x86};

bool host_has_sha() {
  unsigned eax, ebx, ecx, edx;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  const bool ssse3 = (ecx & (1u << 9)) != 0;
  const bool sse41 = (ecx & (1u << 19)) != 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  const bool sha = (ebx & (1u << 29)) != 0;
  return ssse3 && sse41 && sha;
}
#endif

std::atomic<const ShaBackend*> g_forced{nullptr};

}  // namespace

const ShaBackend& portable_sha_backend() {
  return kPortable;
}

const ShaBackend* host_sha_backend() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool available = host_has_sha();
  return available ? &kHost : nullptr;
#else
  return nullptr;
#endif
}

const ShaBackend& active_sha_backend() {
  if (const ShaBackend* forced = g_forced.load(std::memory_order_relaxed)) return *forced;
  const ShaBackend* host = host_sha_backend();
  return host != nullptr ? *host : kPortable;
}

void select_sha_backend(const ShaBackend* backend) {
  g_forced.store(backend, std::memory_order_relaxed);
}

}  // namespace padlock
