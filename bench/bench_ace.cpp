// ACE model throughput: REP XCRYPT{ECB,CBC,CTR} through AceUnit::execute on FlatMemory,
// beside host OpenSSL EVP on the same buffer sizes. One run prints one table. Model and
// OpenSSL alternate in short slices and each side reports its best slice, so a busy
// machine skews both alike.
//   bench_ace [--cpu NAME] [--seconds S]   (S: time per side per row, default 0.4)
#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "isa/decoder.hpp"
#include "models/ace/ace_unit.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"

namespace {

using padlock::AceUnit;
using padlock::ArchState;
using padlock::ExecEnv;
using padlock::FlatMemory;
using padlock::Gpr;
using padlock::Outcome;
using padlock::Status;
namespace isa = padlock::isa;

using Clock = std::chrono::steady_clock;

constexpr uint64_t kCw = 0x10000, kKey = 0x11000, kIv = 0x12000, kIn = 0x100000, kOut = 0x200000;

struct Case {
  const char* name;
  isa::InsnId id;
  uint32_t cw;  // §3.2 control word: AES-128, hardware key, 10 rounds
  const EVP_CIPHER* (*evp)();
  bool evp_encrypt;
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Model: one REP XCRYPT over the whole buffer per iteration, EFLAGS[30] kept set.
double model_mbps(const padlock::CpuModel& cpu, const Case& c, size_t bytes, double secs,
                  uint64_t* model_cycles) {
  FlatMemory mem;
  mem.map(kCw, 0x3000);
  mem.map(kIn, bytes);
  mem.map(kOut, bytes);
  for (size_t i = 0; i < bytes; ++i) mem.host(kIn, bytes)[i] = uint8_t(i * 7);
  std::memcpy(mem.host(kCw, 4), &c.cw, 4);
  for (int i = 0; i < 16; ++i) mem.host(kKey, 16)[i] = uint8_t(i);
  AceUnit ace(cpu);
  ArchState s;
  ExecEnv env;
  const uint8_t enc[4] = {0xF3, 0x0F, 0xA7, isa::info(c.id).modrm};
  const isa::Decoded d = isa::decode(enc, 4, isa::CpuMode::Protected32);
  uint64_t iters = 0;
  const auto t0 = Clock::now();
  double el = 0;
  do {
    for (int rep = 0; rep < 16; ++rep) {
      s[Gpr::AX] = kIv;
      s[Gpr::BX] = kKey;
      s[Gpr::DX] = kCw;
      s[Gpr::SI] = kIn;
      s[Gpr::DI] = kOut;
      s[Gpr::CX] = bytes / 16;
      const Outcome o = ace.execute(d, s, mem, env);
      if (o.status != Status::Completed) {
        std::fprintf(stderr, "%s: unexpected status\n", c.name);
        return 0;
      }
      *model_cycles = o.cycles;
      ++iters;
    }
    el = seconds_since(t0);
  } while (el < secs);
  return double(iters) * double(bytes) / el / 1e6;
}

double openssl_mbps(const Case& c, size_t bytes, double secs) {
  std::vector<uint8_t> in(bytes), out(bytes + 32);
  for (size_t i = 0; i < bytes; ++i) in[i] = uint8_t(i * 7);
  uint8_t key[16], iv[16] = {};
  for (int i = 0; i < 16; ++i) key[i] = uint8_t(i);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_CipherInit_ex(ctx, c.evp(), nullptr, key, iv, c.evp_encrypt ? 1 : 0);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  uint64_t iters = 0;
  const auto t0 = Clock::now();
  double el = 0;
  do {
    for (int rep = 0; rep < 16; ++rep) {
      int n = 0;
      EVP_CipherUpdate(ctx, out.data(), &n, in.data(), int(bytes));
      ++iters;
    }
    el = seconds_since(t0);
  } while (el < secs);
  EVP_CIPHER_CTX_free(ctx);
  return double(iters) * double(bytes) / el / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cpu_name = "esther";
  double secs = 0.4;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--cpu") == 0) cpu_name = argv[i + 1];
    if (std::strcmp(argv[i], "--seconds") == 0) secs = std::atof(argv[i + 1]);
  }
  const padlock::CpuModel* cpu = padlock::find_cpu_model(cpu_name);
  if (cpu == nullptr) {
    std::fprintf(stderr, "unknown cpu %s\n", cpu_name.c_str());
    return 2;
  }
  const Case cases[] = {
      {"ECB encrypt", isa::InsnId::XcryptEcb, 0x00A, EVP_aes_128_ecb, true},
      {"CBC encrypt", isa::InsnId::XcryptCbc, 0x00A, EVP_aes_128_cbc, true},
      {"CBC decrypt", isa::InsnId::XcryptCbc, 0x20A, EVP_aes_128_cbc, false},
      {"CTR", isa::InsnId::XcryptCtr, 0x00A, EVP_aes_128_ctr, true},
  };
  AceUnit probe(*cpu);
  std::printf("ACE model vs host OpenSSL EVP, AES-128 (cpu %s, host AES: %s)\n", cpu->name,
              probe.host_aes_name());
  std::printf("%-12s %7s %12s %12s %7s %14s\n", "mode", "size", "model MB/s", "OpenSSL MB/s",
              "ratio", "model cycles");
  constexpr int kSlices = 8;
  for (const Case& c : cases) {
    for (size_t bytes : {size_t(8192), size_t(65536)}) {
      uint64_t cycles = 0;
      double m = 0, o = 0;
      for (int i = 0; i < kSlices; ++i) {
        m = std::max(m, model_mbps(*cpu, c, bytes, secs / kSlices, &cycles));
        o = std::max(o, openssl_mbps(c, bytes, secs / kSlices));
      }
      std::printf("%-12s %6zuK %12.0f %12.0f %7.2f %14llu\n", c.name, bytes / 1024, m, o, m / o,
                  static_cast<unsigned long long>(cycles));
    }
  }
  return 0;
}
