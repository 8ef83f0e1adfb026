// PHE model throughput: REP XSHA1 / REP XSHA256 executed by the model (decode + Padlock +
// PheUnit on FlatMemory) on 8 KB and 1 MB messages, beside host OpenSSL (EVP) on the same
// sizes. Host wall-clock rates, plus the modelled guest rate at the model's clock (§4.2).
#include <openssl/evp.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "isa/decoder.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"
#include "models/phe/sha_backend.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kHash = 0x10000;
constexpr uint64_t kInput = 0x100000;
constexpr double kMinSeconds = 0.4;

template <typename Fn>
double bytes_per_second(size_t len, Fn&& fn) {
  size_t iters = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    fn();
    ++iters;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < kMinSeconds);
  return static_cast<double>(len) * iters / elapsed;
}

struct ModelRun {
  double host_rate;
  uint64_t guest_cycles;
};

ModelRun model_rate(padlock::Padlock& pl, padlock::FlatMemory& mem, bool sha256, size_t len) {
  using namespace padlock;
  const uint8_t bytes[] = {0xF3, 0x0F, 0xA6, uint8_t(sha256 ? 0xD0 : 0xC8)};
  const isa::Decoded d = isa::decode(bytes, sizeof bytes, isa::CpuMode::Protected32);
  ExecEnv env;
  ArchState s;
  uint64_t cycles = 0;
  const double rate = bytes_per_second(len, [&] {
    static const uint32_t iv1[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    static const uint32_t iv256[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                                      0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};
    std::memcpy(mem.host(kHash, 32), sha256 ? static_cast<const void*>(iv256) : iv1,
                sha256 ? 32 : 20);
    s[Gpr::AX] = 0;
    s[Gpr::CX] = len;
    s[Gpr::SI] = kInput;
    s[Gpr::DI] = kHash;
    const Outcome o = pl.execute(d, s, mem, env);
    if (o.status != Status::Completed) std::abort();
    cycles = o.cycles;
  });
  return {rate, cycles};
}

double openssl_rate(bool sha256, const uint8_t* data, size_t len) {
  const EVP_MD* md = sha256 ? EVP_sha256() : EVP_sha1();
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int out_len = 0;
  return bytes_per_second(len, [&] { EVP_Digest(data, len, out, &out_len, md, nullptr); });
}

}  // namespace

int main() {
  using namespace padlock;
  const CpuModel& cpu = *find_cpu_model("esther-c5j");
  Padlock pl(cpu);
  FlatMemory mem;
  const size_t max_len = 1 << 20;
  mem.map(kHash, 4096);
  mem.map(kInput, max_len);
  uint8_t* input = mem.host(kInput, max_len);
  for (size_t i = 0; i < max_len; ++i) input[i] = static_cast<uint8_t>(i * 131 + 7);

  const ShaBackend* host = host_sha_backend();
  std::printf("PHE model benchmark (cpu model %s, %.0f MHz); SHA backend: %s\n", cpu.name,
              cpu.default_mhz.value, active_sha_backend().name);
  std::printf("%-8s %8s %14s %14s %8s %14s %16s\n", "hash", "size", "model MB/s", "OpenSSL MB/s",
              "ratio", "portable MB/s", "guest MB/s @MHz");
  for (bool sha256 : {false, true}) {
    for (size_t len : {size_t{8192}, max_len}) {
      select_sha_backend(nullptr);
      const ModelRun m = model_rate(pl, mem, sha256, len);
      const double ossl = openssl_rate(sha256, input, len);
      select_sha_backend(&portable_sha_backend());
      const ModelRun p = model_rate(pl, mem, sha256, len);
      select_sha_backend(nullptr);
      const double guest = static_cast<double>(len) / m.guest_cycles * cpu.default_mhz.value;
      std::printf("%-8s %8zu %14.1f %14.1f %8.2f %14.1f %16.1f\n", sha256 ? "SHA-256" : "SHA-1",
                  len, m.host_rate / 1e6, ossl / 1e6, m.host_rate / ossl, p.host_rate / 1e6, guest);
    }
  }
  if (host == nullptr)
    std::printf("note: host has no SHA extensions; the model used the portable path\n");
  return 0;
}
