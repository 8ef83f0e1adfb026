// SHA-1 and SHA-256 compression with the host's SHA extensions. Built with -msha -msse4.1
// -mssse3 (the *_x86.cpp rule in CMakeLists.txt); only called after sha_portable.cpp has
// checked CPUID, so nothing here runs on a host without them.
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "models/phe/sha_constants.hpp"

namespace padlock {

namespace {

// Four SHA-1 rounds; G is the group (rounds 4G..4G+3). Message words live in a ring of
// four vectors, W[4G] in the top lane as SHA1RNDS4 expects.
template <int G>
inline void sha1_group(__m128i& abcd, __m128i& e0, __m128i& prev, __m128i (&m)[4]) {
  if constexpr (G >= 4) {
    m[G % 4] = _mm_sha1msg2_epu32(
        _mm_xor_si128(_mm_sha1msg1_epu32(m[G % 4], m[(G + 1) % 4]), m[(G + 2) % 4]),
        m[(G + 3) % 4]);
  }
  __m128i e;
  if constexpr (G == 0) {
    e = _mm_add_epi32(e0, m[0]);
  } else {
    e = _mm_sha1nexte_epu32(prev, m[G % 4]);
  }
  prev = abcd;
  abcd = _mm_sha1rnds4_epu32(abcd, e, G / 5);
}

// Four SHA-256 rounds on the ABEF/CDGH register pair.
template <int G>
inline void sha256_group(__m128i& abef, __m128i& cdgh, __m128i (&m)[4]) {
  if constexpr (G >= 4) {
    const __m128i w7 = _mm_alignr_epi8(m[(G + 3) % 4], m[(G + 2) % 4], 4);
    m[G % 4] = _mm_sha256msg2_epu32(
        _mm_add_epi32(_mm_sha256msg1_epu32(m[G % 4], m[(G + 1) % 4]), w7), m[(G + 3) % 4]);
  }
  const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kSha256K + 4 * G));
  __m128i msg = _mm_add_epi32(m[G % 4], k);
  cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
  msg = _mm_shuffle_epi32(msg, 0x0E);
  abef = _mm_sha256rnds2_epu32(abef, cdgh, msg);
}

}  // namespace

void sha1_blocks_x86(uint32_t* state, const uint8_t* data, size_t blocks) {
  const __m128i reverse = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
  __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0x1B);
  __m128i e0 = _mm_set_epi32(static_cast<int>(state[4]), 0, 0, 0);
  for (; blocks != 0; --blocks, data += 64) {
    const __m128i abcd_in = abcd;
    const __m128i e_in = e0;
    __m128i m[4];
    for (int i = 0; i < 4; ++i) {
      m[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
                              reverse);
    }
    __m128i prev = abcd;
    [&]<int... G>(std::integer_sequence<int, G...>) {
      (sha1_group<G>(abcd, e0, prev, m), ...);
    }
    (std::make_integer_sequence<int, 20>{});
    e0 = _mm_sha1nexte_epu32(prev, e_in);
    abcd = _mm_add_epi32(abcd, abcd_in);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_shuffle_epi32(abcd, 0x1B));
  state[4] = static_cast<uint32_t>(_mm_extract_epi32(e0, 3));
}

void sha256_blocks_x86(uint32_t* state, const uint8_t* data, size_t blocks) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  const __m128i badc =
      _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0xB1);
  const __m128i efgh =
      _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4)), 0x1B);
  __m128i abef = _mm_alignr_epi8(badc, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, badc, 0xF0);
  for (; blocks != 0; --blocks, data += 64) {
    const __m128i abef_in = abef;
    const __m128i cdgh_in = cdgh;
    __m128i m[4];
    for (int i = 0; i < 4; ++i) {
      m[i] =
          _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)), bswap);
    }
    [&]<int... G>(std::integer_sequence<int, G...>) {
      (sha256_group<G>(abef, cdgh, m), ...);
    }
    (std::make_integer_sequence<int, 16>{});
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}

}  // namespace padlock

#endif  // x86
