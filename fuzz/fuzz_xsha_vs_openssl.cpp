// libFuzzer target, differential: REP XSHA1 / XSHA256 (models/phe, through Padlock::execute
// as the emulator runs it) against OpenSSL's SHA1 / SHA256 on the same bytes, with
// interrupts at fuzzed cycles (each resume continues from the registers, §4.1, §1.7).
// Input: byte 0 selects the model (bit 0: esther / nano), the hash (bit 1) and the
// interrupt spacing (bits 2..7, x 64 clocks; 0 = none); the rest is the message.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "isa/decoder.hpp"
#include "models/cpu_model.hpp"
#include "models/flat_memory.hpp"
#include "models/padlock.hpp"

using namespace padlock;

namespace {

constexpr uint64_t kHash = 0x10000, kInput = 0x400000, kMaxInput = 1 << 16;
constexpr uint32_t kSha1Init[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
constexpr uint32_t kSha256Init[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                                     0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};

struct Rig {
  const CpuModel& cpu;
  Padlock padlock;
  FlatMemory mem;
  explicit Rig(const char* model) : cpu(*find_cpu_model(model)), padlock(cpu) {
    mem.map(kHash, 4096);
    mem.map(kInput, kMaxInput + 4096);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size - 1 > kMaxInput) return 0;
  static Rig esther("esther-c5j"), nano("nano");
  Rig& r = (data[0] & 1) ? nano : esther;
  const bool sha256 = (data[0] & 2) != 0;
  const uint64_t spacing = static_cast<uint64_t>(data[0] >> 2) * 64;
  const uint8_t* msg = data + 1;
  const size_t len = size - 1;
  if (len != 0) std::memcpy(r.mem.host(kInput, len), msg, len);
  std::memcpy(r.mem.host(kHash, 32), sha256 ? kSha256Init : kSha1Init, sha256 ? 32 : 20);
  ArchState s;
  s[Gpr::AX] = 0;
  s[Gpr::CX] = len;
  s[Gpr::SI] = kInput;
  s[Gpr::DI] = kHash;
  const uint8_t bytes[4] = {0xF3, 0x0F, 0xA6, uint8_t(sha256 ? 0xD0 : 0xC8)};
  const isa::Decoded d = isa::decode(bytes, 4, isa::CpuMode::Protected32);
  ExecEnv env;
  for (int resumes = 0;; ++resumes) {
    env.interrupt_at = spacing == 0 ? env.interrupt_at : env.now + spacing;
    const Outcome o = r.padlock.execute(d, s, r.mem, env);
    env.now += o.cycles + 1;
    if (o.status == Status::Completed) break;
    if (o.status != Status::Interrupted || resumes > 1 << 20) __builtin_trap();
  }
  uint8_t want[32];
  if (sha256) {
    SHA256(msg, len, want);
  } else {
    SHA1(msg, len, want);
  }
  // §4.1: the stored words BSWAPped give the digest; EAX == ECX at the end.
  const uint8_t* h = r.mem.host(kHash, 32);
  for (int i = 0; i < (sha256 ? 8 : 5); ++i) {
    for (int b = 0; b < 4; ++b) {
      if (h[4 * i + b] != want[4 * i + 3 - b]) __builtin_trap();
    }
  }
  if (s[Gpr::AX] != len) __builtin_trap();
  return 0;
}
