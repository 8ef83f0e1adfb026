// REP XSHA512 and REP XSHA384 (PHE2, docs/fidelity/phe2.md) as OpenSSL's and GnuTLS's
// padlock_sha512_blocks drive them: FIPS 180-4 vectors (tests/vectors/sha/sha512.vec,
// sha384.vec) with the software padding those callers do, the chaining state after whole
// blocks against OpenSSL's SHA512_Transform, the registers, interrupts, faults and the
// documented choices.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#include "common/vector_file.hpp"
#include "models/phe/sha512.hpp"
#include "tests/unit/models/gmi/zx_rig.hpp"

namespace padlock::test {
namespace {

// The padding padlock_sha512_blocks' callers add (FIPS 180-4 §5.1.2): 0x80, zeros, the
// 128-bit big-endian bit length.
std::vector<uint8_t> padded(const std::vector<uint8_t>& m) {
  std::vector<uint8_t> p = m;
  p.push_back(0x80);
  while (p.size() % 128 != 112) p.push_back(0);
  for (int i = 0; i < 8; ++i) p.push_back(0);
  const uint64_t bits = m.size() * 8;
  for (int i = 7; i >= 0; --i) p.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  return p;
}

std::vector<uint8_t> digest_of(const uint64_t state[8], size_t bytes) {
  std::vector<uint8_t> d;
  for (int w = 0; w < 8; ++w)
    for (int i = 7; i >= 0; --i) d.push_back(static_cast<uint8_t>(state[w] >> (8 * i)));
  d.resize(bytes);
  return d;
}

// One XSHA over the padded message from `iv`; returns the state at EDI.
std::vector<uint8_t> run_blocks(ZxRig& rig, const std::vector<uint8_t>& insn, const uint64_t iv[8],
                                const std::vector<uint8_t>& msg, Outcome* out = nullptr) {
  rig.put(ZxRig::kStateVa, reinterpret_cast<const uint8_t*>(iv), 64);
  rig.put(ZxRig::kInputVa, msg);
  rig.reg(Gpr::SI) = ZxRig::kInputVa;
  rig.reg(Gpr::DI) = ZxRig::kStateVa;
  rig.reg(Gpr::CX) = msg.size() / 128;
  const Outcome o = rig.exec(insn);
  if (out != nullptr) *out = o;
  return rig.get(ZxRig::kStateVa, 64);
}

struct Vec {
  std::string name;
  std::vector<uint8_t> in, out;
};
std::vector<Vec> load(const char* file) {
  std::vector<Vec> v;
  for (const VectorRecord& r : read_vectors(file)) {
    Vec x{r.str("Name"), {}, r.hex("Out")};
    const std::vector<uint8_t> unit = r.hex("In");
    for (uint64_t i = 0; i < r.num("Repeat"); ++i)
      x.in.insert(x.in.end(), unit.begin(), unit.end());
    v.push_back(std::move(x));
  }
  return v;
}

TEST(Phe2, Xsha512Fips180_4Vectors) {
  for (const Vec& v : load("sha/sha512.vec")) {
    SCOPED_TRACE(v.name);
    ZxRig rig(zhaoxin_like(), 2 << 20);
    const std::vector<uint8_t> msg = padded(v.in);
    rig.reg(Gpr::AX) = 0x12345678;
    Outcome o;
    const std::vector<uint8_t> st = run_blocks(rig, kXsha512, kSha512Iv, msg, &o);
    ASSERT_EQ(o.status, Status::Completed);
    uint64_t words[8];
    std::memcpy(words, st.data(), 64);
    EXPECT_EQ(digest_of(words, 64), v.out);
    std::vector<uint8_t> ref(64);
    SHA512(v.in.data(), v.in.size(), ref.data());
    EXPECT_EQ(digest_of(words, 64), ref);
    // Registers as the callers see them: ECX = 0, ESI past the input, EDI and EAX as before.
    EXPECT_EQ(rig.reg(Gpr::CX), 0u);
    EXPECT_EQ(rig.reg(Gpr::SI), ZxRig::kInputVa + msg.size());
    EXPECT_EQ(rig.reg(Gpr::DI), ZxRig::kStateVa);
    EXPECT_EQ(rig.reg(Gpr::AX), 0x12345678u);
    EXPECT_EQ(o.blocks, msg.size() / 128);
    EXPECT_EQ(rig.diag.count(Diag::Phe2EaxIgnored), 1);
  }
}

// XSHA384 runs the same compression; the software gives the SHA-384 IV and truncates.
TEST(Phe2, Xsha384Fips180_4Vectors) {
  for (const Vec& v : load("sha/sha384.vec")) {
    SCOPED_TRACE(v.name);
    ZxRig rig(zhaoxin_like(), 2 << 20);
    const std::vector<uint8_t> st = run_blocks(rig, kXsha384, kSha384Iv, padded(v.in));
    uint64_t words[8];
    std::memcpy(words, st.data(), 64);
    EXPECT_EQ(digest_of(words, 48), v.out);
    EXPECT_EQ(rig.diag.count(Diag::Xsha384State), 1);
  }
}

// The state after whole blocks equals OpenSSL's SHA512_Transform chaining value.
TEST(Phe2, StateAfterBlocksMatchesOpenSsl) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const size_t blocks = seed % 7 + 1;
    const std::vector<uint8_t> msg = random_bytes(128 * blocks, seed);
    ZxRig rig;
    const std::vector<uint8_t> st = run_blocks(rig, kXsha512, kSha512Iv, msg);
    SHA512_CTX c;
    SHA512_Init(&c);
    for (size_t i = 0; i < blocks; ++i) SHA512_Transform(&c, msg.data() + 128 * i);
    EXPECT_EQ(std::memcmp(st.data(), c.h, 64), 0) << seed;
  }
}

TEST(Phe2, EcxZeroDoesNothing) {
  ZxRig rig;
  const std::vector<uint8_t> before = rig.get(ZxRig::kStateVa, 64);
  rig.reg(Gpr::SI) = ZxRig::kInputVa;
  rig.reg(Gpr::DI) = ZxRig::kStateVa + 8;  // misaligned too: ECX = 0 checks nothing
  rig.reg(Gpr::CX) = 0;
  const Outcome o = rig.exec(kXsha512);
  EXPECT_EQ(o.status, Status::Completed);
  EXPECT_EQ(rig.reg(Gpr::SI), ZxRig::kInputVa);
  EXPECT_EQ(rig.get(ZxRig::kStateVa, 64), before);
  EXPECT_EQ(rig.diag.count(Diag::Phe2EcxZero), 1);
}

TEST(Phe2, MisalignedStateIsGp) {
  ZxRig rig;
  rig.reg(Gpr::SI) = ZxRig::kInputVa;
  rig.reg(Gpr::DI) = ZxRig::kStateVa + 8;
  rig.reg(Gpr::CX) = 1;
  const Outcome o = rig.exec(kXsha512);
  EXPECT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::GeneralProtection);
  EXPECT_EQ(rig.reg(Gpr::CX), 1u);
}

// A fault in the third block leaves ECX/ESI and the state after two blocks (restartable).
TEST(Phe2, InputFaultAfterTwoBlocksIsRestartable) {
  ZxRig rig;
  const std::vector<uint8_t> msg = random_bytes(128 * 4, 7);
  rig.put(ZxRig::kStateVa, reinterpret_cast<const uint8_t*>(kSha512Iv), 64);
  rig.put(ZxRig::kInputVa + 4096 - 256, msg);
  rig.mem.protect(ZxRig::kInputVa + 4096, 4096, FlatMemory::kNone);
  rig.reg(Gpr::SI) = ZxRig::kInputVa + 4096 - 256;
  rig.reg(Gpr::DI) = ZxRig::kStateVa;
  rig.reg(Gpr::CX) = 4;
  Outcome o = rig.exec(kXsha512);
  ASSERT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, ZxRig::kInputVa + 4096);
  EXPECT_EQ(rig.reg(Gpr::CX), 2u);
  EXPECT_EQ(rig.reg(Gpr::SI), ZxRig::kInputVa + 4096);
  rig.mem.protect(ZxRig::kInputVa + 4096, 4096, FlatMemory::kRW);
  o = rig.exec(kXsha512);
  ASSERT_EQ(o.status, Status::Completed);
  SHA512_CTX c;
  SHA512_Init(&c);
  for (int i = 0; i < 4; ++i) SHA512_Transform(&c, msg.data() + 128 * i);
  EXPECT_EQ(std::memcmp(rig.get(ZxRig::kStateVa, 64).data(), c.h, 64), 0);
}

// §1.7: interrupted between blocks, re-executing finishes the same hash.
TEST(Phe2, InterruptedAndRestarted) {
  ZxRig rig;
  const std::vector<uint8_t> msg = random_bytes(128 * 40, 3);
  rig.put(ZxRig::kStateVa, reinterpret_cast<const uint8_t*>(kSha512Iv), 64);
  rig.put(ZxRig::kInputVa, msg);
  rig.reg(Gpr::SI) = ZxRig::kInputVa;
  rig.reg(Gpr::DI) = ZxRig::kStateVa;
  rig.reg(Gpr::CX) = 40;
  int interrupts = 0;
  for (int guard = 0; guard < 100; ++guard) {
    rig.env.interrupt_at = rig.env.now + 1000;
    const Outcome o = rig.exec(kXsha512);
    if (o.status == Status::Completed) break;
    ASSERT_EQ(o.status, Status::Interrupted);
    ++interrupts;
  }
  EXPECT_GT(interrupts, 5);
  SHA512_CTX c;
  SHA512_Init(&c);
  for (int i = 0; i < 40; ++i) SHA512_Transform(&c, msg.data() + 128 * i);
  EXPECT_EQ(std::memcmp(rig.get(ZxRig::kStateVa, 64).data(), c.h, 64), 0);
}

// §1.7: the interruptible points lie between blocks. An interrupt already due stops the
// instruction after its first block, with ECX at the blocks left; after the last block there
// is no point left, and the instruction completes with ECX = 0.
TEST(Phe2, NoInterruptPointAfterTheLastBlock) {
  for (const uint64_t blocks : {uint64_t{1}, uint64_t{3}}) {
    ZxRig rig;
    rig.reg(Gpr::SI) = ZxRig::kInputVa;
    rig.reg(Gpr::DI) = ZxRig::kStateVa;
    rig.reg(Gpr::CX) = blocks;
    rig.env.interrupt_at = rig.env.now;
    const Outcome o = rig.exec(kXsha512);
    EXPECT_EQ(o.status, blocks == 1 ? Status::Completed : Status::Interrupted) << blocks;
    EXPECT_EQ(o.blocks, 1u);
    EXPECT_EQ(rig.reg(Gpr::CX), blocks - 1);
  }
}

// The documented choice of clocks: start-up plus 304 per block.
TEST(Phe2, ClocksAreStartupPlusBlocks) {
  ZxRig rig;
  rig.reg(Gpr::SI) = ZxRig::kInputVa;
  rig.reg(Gpr::DI) = ZxRig::kStateVa;
  rig.reg(Gpr::CX) = 10;
  const Outcome o = rig.exec(kXsha512);
  EXPECT_EQ(o.cycles, 40u + 10 * 304u);
  EXPECT_EQ(o.blocks, 10u);
  EXPECT_EQ(o.bytes, 10 * 128u);  // FIPS 180-4's 1024-bit blocks
  // What the trace's result digest covers: the message read at ESI, the state at EDI.
  EXPECT_EQ(o.input.addr, ZxRig::kInputVa);
  EXPECT_EQ(o.input.len, 10 * 128u);
  EXPECT_EQ(o.output.addr, ZxRig::kStateVa);
  EXPECT_EQ(o.output.len, 64u);
}

// Without PHE2 (VIA's nano): #UD, as before.
TEST(Phe2, AbsentOnNanoIsUd) {
  ZxRig rig(*find_cpu_model("nano"));
  rig.reg(Gpr::CX) = 1;
  for (const auto& insn : {kXsha384, kXsha512}) {
    const Outcome o = rig.exec(insn);
    EXPECT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::InvalidOpcode);
  }
}

// CPUID C000_0001 EDX: PHE2's bits 25/26 with the unit (Zhaoxin's cpufeatures patch).
TEST(Phe2, CpuidBits) {
  ZxRig rig;
  EXPECT_EQ(rig.padlock().centaur_features() & (3u << 25), 3u << 25);
  ZxRig nano(*find_cpu_model("nano"));
  EXPECT_EQ(nano.padlock().centaur_features() & (3u << 25), 0u);
}

}  // namespace
}  // namespace padlock::test
