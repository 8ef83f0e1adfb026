// The SHA-1/SHA-256 compression functions behind the PHE model (§4.1). Two backends:
// the host's SHA extensions (sha_x86.cpp, chosen at run time after a CPUID check) and a
// portable C++ fallback (sha_portable.cpp). Both run FIPS 180-2 compression on whole
// 64-byte blocks; padding is the unit's job (§4.1 "Padding").
#pragma once

#include <cstddef>
#include <cstdint>

namespace padlock {

// Compresses `blocks` 64-byte blocks into `state` (5 words for SHA-1, 8 for SHA-256),
// the words as plain integers (the §4.3 little-endian layout at EDI).
using ShaBlocksFn = void (*)(uint32_t* state, const uint8_t* data, size_t blocks);

struct ShaBackend {
  const char* name;
  ShaBlocksFn sha1;
  ShaBlocksFn sha256;
};

// Always available.
const ShaBackend& portable_sha_backend();
// The host SHA-extension backend, or nullptr when the host CPU lacks SHA/SSE4.1/SSSE3
// (or the build is not for x86).
const ShaBackend* host_sha_backend();

// The backend the PHE model uses: the host one when available, unless a test or benchmark
// forced another with select_sha_backend (nullptr restores the automatic choice).
const ShaBackend& active_sha_backend();
void select_sha_backend(const ShaBackend* backend);

}  // namespace padlock
