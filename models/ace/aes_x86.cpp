// AES-NI kernels (host fast path). CMake compiles *_x86.cpp with -maes -msse4.1; the code
// runs only after CPUID says the host has AES-NI and SSE4.1. Independent blocks (ECB, CBC
// and CFB decryption, CTR) go eight at a time to keep the AES units busy.
#include "models/ace/aes_core.hpp"

#if defined(__x86_64__) || defined(__i386__)

#include <cpuid.h>
#include <immintrin.h>

namespace padlock::ace {

namespace {

// The schedule where it is: RoundKeys keeps its round keys 16-byte aligned, so the rounds
// load them from there (a copy cost a memcpy call per instruction, which a one-block
// REP XCRYPTECB felt).
struct Keys {
  const __m128i* k;
  unsigned rounds;
  bool full_last;
};

inline void load_keys(const RoundKeys& rk, Keys& K) {
  K.k = reinterpret_cast<const __m128i*>(rk.k);
  K.rounds = rk.rounds;
  K.full_last = rk.full_last;
}

inline __m128i loadu(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline void storeu(uint8_t* p, __m128i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
}

// The two directions' round instructions. aesdec is one round of the equivalent inverse
// cipher, so dw[] keys go in unchanged.
struct Enc {
  static __m128i round(__m128i b, __m128i k) { return _mm_aesenc_si128(b, k); }
  static __m128i last(__m128i b, __m128i k) { return _mm_aesenclast_si128(b, k); }
};
struct Dec {
  static __m128i round(__m128i b, __m128i k) { return _mm_aesdec_si128(b, k); }
  static __m128i last(__m128i b, __m128i k) { return _mm_aesdeclast_si128(b, k); }
};

// W blocks through every round of direction Dir.
template <int W, typename Dir>
inline void rounds_n(const Keys& K, __m128i* b) {
#pragma GCC unroll 8
  for (int j = 0; j < W; ++j) b[j] = _mm_xor_si128(b[j], K.k[0]);
  for (unsigned i = 1; i < K.rounds; ++i) {
    const __m128i k = K.k[i];
#pragma GCC unroll 8
    for (int j = 0; j < W; ++j) b[j] = Dir::round(b[j], k);
  }
  const __m128i k = K.k[K.rounds];
  if (K.full_last) {
#pragma GCC unroll 8
    for (int j = 0; j < W; ++j) b[j] = Dir::round(b[j], k);
  } else {
#pragma GCC unroll 8
    for (int j = 0; j < W; ++j) b[j] = Dir::last(b[j], k);
  }
}

inline __m128i encrypt1(const Keys& K, __m128i x) {
  rounds_n<1, Enc>(K, &x);
  return x;
}

// ECB: independent blocks, eight at a time.
template <typename Dir>
void ecb(const RoundKeys& rk, const uint8_t* in, uint8_t* out, size_t n) {
  Keys K;
  load_keys(rk, K);
  __m128i b[8];
  for (; n >= 8; n -= 8, in += 128, out += 128) {
    for (int j = 0; j < 8; ++j) b[j] = loadu(in + 16 * j);
    rounds_n<8, Dir>(K, b);
    for (int j = 0; j < 8; ++j) storeu(out + 16 * j, b[j]);
  }
  for (; n > 0; --n, in += 16, out += 16) {
    __m128i x = loadu(in);
    rounds_n<1, Dir>(K, &x);
    storeu(out, x);
  }
}

void cbc_enc(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
             size_t stride) {
  Keys K;
  load_keys(rk, K);
  __m128i c = loadu(iv);
  for (; n > 0; --n, in += 16, out += stride) {
    c = encrypt1(K, _mm_xor_si128(c, loadu(in)));
    storeu(out, c);
  }
  storeu(iv, c);
}

void cbc_dec(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
             size_t stride) {
  Keys K;
  load_keys(rk, K);
  __m128i prev = loadu(iv);
  __m128i c[8], b[8];
  for (; n >= 8; n -= 8, in += 128) {
    for (int j = 0; j < 8; ++j) b[j] = c[j] = loadu(in + 16 * j);
    rounds_n<8, Dec>(K, b);
    storeu(out, _mm_xor_si128(b[0], prev));
    out += stride;
    for (int j = 1; j < 8; ++j, out += stride) storeu(out, _mm_xor_si128(b[j], c[j - 1]));
    prev = c[7];
  }
  for (; n > 0; --n, in += 16, out += stride) {
    const __m128i ci = loadu(in);
    __m128i x = ci;
    rounds_n<1, Dec>(K, &x);
    storeu(out, _mm_xor_si128(x, prev));
    prev = ci;
  }
  storeu(iv, prev);
}

void cfb_enc(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
             size_t stride) {
  Keys K;
  load_keys(rk, K);
  __m128i c = loadu(iv);
  for (; n > 0; --n, in += 16, out += stride) {
    c = _mm_xor_si128(encrypt1(K, c), loadu(in));
    storeu(out, c);
  }
  storeu(iv, c);
}

void cfb_dec(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n,
             size_t stride) {
  Keys K;
  load_keys(rk, K);
  __m128i prev = loadu(iv);
  __m128i c[8], b[8];
  for (; n >= 8; n -= 8, in += 128) {
    for (int j = 0; j < 8; ++j) c[j] = loadu(in + 16 * j);
    b[0] = prev;
    for (int j = 1; j < 8; ++j) b[j] = c[j - 1];
    rounds_n<8, Enc>(K, b);
    for (int j = 0; j < 8; ++j, out += stride) storeu(out, _mm_xor_si128(b[j], c[j]));
    prev = c[7];
  }
  for (; n > 0; --n, in += 16, out += stride) {
    const __m128i ci = loadu(in);
    storeu(out, _mm_xor_si128(encrypt1(K, prev), ci));
    prev = ci;
  }
  storeu(iv, prev);
}

void ofb(const RoundKeys& rk, uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t n) {
  Keys K;
  load_keys(rk, K);
  __m128i o = loadu(iv);
  for (; n > 0; --n, in += 16, out += 16) {
    o = encrypt1(K, o);
    storeu(out, _mm_xor_si128(o, loadu(in)));
  }
  storeu(iv, o);
}

// Counter block with bytes 14-15 replaced by the big-endian 16-bit counter value.
inline __m128i counter_block(__m128i base, uint16_t c) {
  return _mm_insert_epi16(base, static_cast<int>(uint16_t(c << 8 | c >> 8)), 7);
}

void ctr(const RoundKeys& rk, uint8_t cb[16], const uint8_t* in, uint8_t* out, size_t n) {
  Keys K;
  load_keys(rk, K);
  const __m128i base = loadu(cb);
  uint16_t c = uint16_t(cb[14] << 8 | cb[15]);
  __m128i b[8];
  for (; n >= 8; n -= 8, in += 128, out += 128) {
    for (int j = 0; j < 8; ++j) b[j] = counter_block(base, uint16_t(c + j));
    c = uint16_t(c + 8);
    rounds_n<8, Enc>(K, b);
    for (int j = 0; j < 8; ++j) storeu(out + 16 * j, _mm_xor_si128(b[j], loadu(in + 16 * j)));
  }
  for (; n > 0; --n, in += 16, out += 16) {
    storeu(out, _mm_xor_si128(encrypt1(K, counter_block(base, c)), loadu(in)));
    c = uint16_t(c + 1);
  }
  cb[14] = uint8_t(c >> 8);
  cb[15] = uint8_t(c);
}

constexpr Kernels kAesNi = {"aes-ni", ecb<Enc>, ecb<Dec>, cbc_enc, cbc_dec,
                            cfb_enc,  cfb_dec,  ofb,      ctr};

bool host_has_aesni() {
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  return (c & bit_AES) != 0 && (c & bit_SSE4_1) != 0;
}

}  // namespace

const Kernels* aesni_kernels() {
  static const bool have = host_has_aesni();
  return have ? &kAesNi : nullptr;
}

}  // namespace padlock::ace

#else

namespace padlock::ace {
const Kernels* aesni_kernels() {
  return nullptr;
}
}  // namespace padlock::ace

#endif
