// The C ABI system mode's QEMU calls (emulator/system/padlock_system.h): models and CPUID,
// the VIA MSRs, and REP XCRYPTECB through guest memory given one page at a time, with a
// page fault and an interrupt point left restartable (§1.7) and EFLAGS[30] (§1.8).
#include "emulator/system/padlock_system.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common/vector_file.hpp"

namespace {

using padlock::test::read_vectors;
using padlock::test::VectorRecord;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kKey = 0x1000, kCw = 0x1100, kSrc = 0x2000, kDst = 0x4000;
// F3 0F A7 C8: REP XCRYPTECB (§3.1).
constexpr uint8_t kXcryptEcb[] = {0xF3, 0x0F, 0xA7, 0xC8};
// §3.2: ROUND = 10, AES, hardware key expansion, encrypt, 128-bit key.
constexpr uint32_t kCwAes128Encrypt = 10;

// Guest memory of eight pages at 0; `hole` (a page number) is unmapped.
struct Pages {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(8 * kPage);
  uint64_t hole = ~0ull;
  int probes = 0;

  static uint8_t* page(void* opaque, uint64_t va, int /*write*/) {
    auto* p = static_cast<Pages*>(opaque);
    ++p->probes;
    if (va >= p->bytes.size() || va / kPage == p->hole) return nullptr;
    return p->bytes.data() + va;
  }
  padlock_sys_mem mem() { return {this, &Pages::page, kPage}; }
  void put(uint64_t va, const std::vector<uint8_t>& b) {
    std::memcpy(&bytes[va], b.data(), b.size());
  }
  std::vector<uint8_t> get(uint64_t va, size_t n) const {
    return {bytes.begin() + static_cast<long>(va), bytes.begin() + static_cast<long>(va + n)};
  }
};

struct Sys {
  explicit Sys(const char* cpu) : p(padlock_sys_create(cpu, 0)) {}
  ~Sys() { padlock_sys_destroy(p); }
  padlock_sys* p;
};

enum { AX, CX, DX, BX, SP, BP, SI, DI };

padlock_sys_regs ecb_regs(uint64_t blocks, uint64_t src) {
  padlock_sys_regs r{};
  r.gpr[CX] = blocks;
  r.gpr[DX] = kCw;
  r.gpr[BX] = kKey;
  r.gpr[SI] = src;
  r.gpr[DI] = kDst;
  r.eflags = 0x202;
  r.cr4_osfxsr = 1;
  return r;
}

// FIPS-197 C.1 in memory: the key, the control word and `blocks` copies of the plaintext.
VectorRecord load_c1(Pages& m, uint64_t src, unsigned blocks) {
  const VectorRecord r = read_vectors("aes/fips197.vec").front();
  m.put(kKey, r.hex("Key"));
  const uint8_t cw[4] = {kCwAes128Encrypt, 0, 0, 0};
  std::memcpy(&m.bytes[kCw], cw, sizeof cw);
  for (unsigned i = 0; i < blocks; ++i) m.put(src + 16 * i, r.hex("In"));
  return r;
}

TEST(PadlockSystem, ModelsByNameAndAbiVersion) {
  EXPECT_EQ(padlock_sys_abi_version(), PADLOCK_SYS_ABI_VERSION);
  std::vector<std::string> names;
  for (int i = 0; i < padlock_sys_model_count(); ++i) names.push_back(padlock_sys_model_name(i));
  EXPECT_NE(std::find(names.begin(), names.end(), "esther-c5j"), names.end());
  EXPECT_EQ(padlock_sys_model_name(padlock_sys_model_count()), nullptr);
  EXPECT_EQ(padlock_sys_create("pentium", 0), nullptr);
  Sys alias("esther");  // the CLI's aliases work here too
  ASSERT_NE(alias.p, nullptr);
}

// §1.1, §1.3: the CPUID QEMU's CPU models are built from.
TEST(PadlockSystem, CpuidFromTheModelData_Sec1_3) {
  Sys s("esther-c5j");
  uint32_t r[4];
  ASSERT_EQ(padlock_sys_cpuid(s.p, 1, 0, r), 1);
  EXPECT_EQ(r[0] & 0xFFF, 0x6A8u);  // family 6, model 10, stepping 8
  ASSERT_EQ(padlock_sys_cpuid(s.p, 0xC0000001, 0, r), 1);
  EXPECT_EQ(r[3] & 0x3FCC, 0x3FCCu);  // RNG, ACE2, PHE, PMM present and enabled (§1.3)
  EXPECT_EQ(padlock_sys_cpuid(s.p, 0x12345678, 0, r), 0);
  Sys nehemiah("nehemiah-c5p");
  ASSERT_EQ(padlock_sys_cpuid(nehemiah.p, 0xC0000001, 0, r), 1);
  EXPECT_EQ(r[3] & (1u << 10), 0u);  // no PHE
}

// §1.4, §1.5: the RNG MSR resets to 0x40; other MSRs are not PadLock's; a model without
// the FCR raises #GP on it.
TEST(PadlockSystem, ViaMsrs_Sec1_4_Sec1_5) {
  Sys s("esther-c5j");
  uint64_t v = 0;
  ASSERT_EQ(padlock_sys_rdmsr(s.p, 0x110B, &v, 0), 1);
  EXPECT_EQ(v & 0x40, 0x40u);
  EXPECT_EQ(padlock_sys_rdmsr(s.p, 0x10, &v, 0), -1);
  ASSERT_EQ(padlock_sys_rdmsr(s.p, 0x1107, &v, 0), 1);
  EXPECT_EQ(padlock_sys_wrmsr(s.p, 0x1107, v & ~(1ull << 28), 0), 1);  // FCR[28] off
  uint32_t r[4];
  padlock_sys_cpuid(s.p, 0xC0000001, 0, r);
  EXPECT_EQ(r[3] & (1u << 7), 0u);  // ACE no longer enabled (§1.3 EDX[7])
  Sys c5xl("nehemiah-c5xl");
  EXPECT_EQ(padlock_sys_rdmsr(c5xl.p, 0x1107, &v, 0), 0);
}

TEST(PadlockSystem, XcryptEcbThroughPages_Sec3_1) {
  Sys s("esther-c5j");
  Pages m;
  const VectorRecord c1 = load_c1(m, kSrc, 2);
  padlock_sys_regs r = ecb_regs(2, kSrc);
  padlock_sys_mem mem = m.mem();
  padlock_sys_result res;
  padlock_sys_execute(s.p, kXcryptEcb, sizeof kXcryptEcb, &r, &mem, 0, &res);
  ASSERT_EQ(res.status, PADLOCK_SYS_DONE);
  EXPECT_EQ(res.length, 4u);
  EXPECT_GT(res.cycles, 0u);
  EXPECT_EQ(m.get(kDst, 16), c1.hex("Out"));
  EXPECT_EQ(m.get(kDst + 16, 16), c1.hex("Out"));
  EXPECT_EQ(r.gpr[CX], 0u);
  EXPECT_EQ(r.gpr[SI], kSrc + 32);
  EXPECT_NE(r.eflags & (1ull << 30), 0u);  // §1.8: the key is loaded
  EXPECT_GT(m.probes, 0);
}

// §1.7: blocks 6..9 are on an unmapped page: #PF at that page with the registers showing
// only completed stores and EFLAGS[30] clear; once the page is there the rest completes.
TEST(PadlockSystem, PageFaultIsRestartable_Sec1_7) {
  Sys s("esther-c5j");
  Pages m;
  const unsigned blocks = 10, before_hole = 6;
  const uint64_t src = 3 * kPage - 16 * before_hole;
  const VectorRecord c1 = load_c1(m, src, before_hole);
  m.hole = 3;
  padlock_sys_regs r = ecb_regs(blocks, src);
  padlock_sys_mem mem = m.mem();
  padlock_sys_result res;
  padlock_sys_execute(s.p, kXcryptEcb, sizeof kXcryptEcb, &r, &mem, 0, &res);
  ASSERT_EQ(res.status, PADLOCK_SYS_PF);
  EXPECT_EQ(res.fault_address, 3 * kPage);
  EXPECT_EQ(res.fault_write, 0);
  const uint64_t done = blocks - r.gpr[CX];
  EXPECT_GT(done, 0u);  // the stores before the fault stay done
  EXPECT_LE(done, before_hole);
  EXPECT_EQ(r.gpr[SI], src + 16 * done);
  EXPECT_EQ(r.gpr[DI], kDst + 16 * done);
  EXPECT_EQ(r.eflags & (1ull << 30), 0u);
  for (unsigned i = 0; i < done; ++i) EXPECT_EQ(m.get(kDst + 16 * i, 16), c1.hex("Out")) << i;
  EXPECT_EQ(m.get(kDst + 16 * done, 16), std::vector<uint8_t>(16, 0));  // nothing beyond
  m.hole = ~0ull;                                                       // the kernel maps the page
  for (unsigned i = before_hole; i < blocks; ++i) m.put(src + 16 * i, c1.hex("In"));
  padlock_sys_execute(s.p, kXcryptEcb, sizeof kXcryptEcb, &r, &mem, 0, &res);
  ASSERT_EQ(res.status, PADLOCK_SYS_DONE);
  EXPECT_EQ(r.gpr[CX], 0u);
  for (unsigned i = 0; i < blocks; ++i) EXPECT_EQ(m.get(kDst + 16 * i, 16), c1.hex("Out")) << i;
}

// §1.7: with an interrupt pending the instruction stops at its first interrupt point
// having made progress, and resumes from its registers.
TEST(PadlockSystem, PendingInterruptStopsAtAnInterruptPoint_Sec1_7) {
  Sys s("esther-c5j");
  Pages m;
  const unsigned blocks = 64;
  const VectorRecord c1 = load_c1(m, kSrc, blocks);
  padlock_sys_regs r = ecb_regs(blocks, kSrc);
  padlock_sys_mem mem = m.mem();
  padlock_sys_result res;
  padlock_sys_execute(s.p, kXcryptEcb, sizeof kXcryptEcb, &r, &mem, 1, &res);
  ASSERT_EQ(res.status, PADLOCK_SYS_INTERRUPTED);
  EXPECT_LT(r.gpr[CX], blocks);
  EXPECT_GT(r.gpr[CX], 0u);
  EXPECT_EQ(r.eflags & (1ull << 30), 0u);
  int rounds = 0;
  do {
    padlock_sys_execute(s.p, kXcryptEcb, sizeof kXcryptEcb, &r, &mem, 0, &res);
  } while (res.status == PADLOCK_SYS_INTERRUPTED && ++rounds < 100);
  ASSERT_EQ(res.status, PADLOCK_SYS_DONE);
  for (unsigned i = 0; i < blocks; ++i) EXPECT_EQ(m.get(kDst + 16 * i, 16), c1.hex("Out")) << i;
}

// RDTSC (docs/system.md, "Time"): QEMU's virtual clock at the model's MHz plus the cycles
// of every PadLock instruction, so a guest timing REP XCRYPT sees the model's cycles on top
// of what QEMU charges; the cycles stay charged as QEMU's clock moves on.
TEST(PadlockSystem, TscIsTheVirtualClockPlusPadlockCycles) {
  Sys s("esther-c5j");
  const uint64_t per_us = padlock_sys_tsc(s.p, 1000);  // the model's MHz
  ASSERT_GT(per_us, 0u);
  Pages m;
  load_c1(m, kSrc, 8);
  padlock_sys_mem mem = m.mem();
  padlock_sys_result res;
  uint64_t charged = 0;
  for (unsigned blocks : {1u, 8u}) {
    padlock_sys_regs r = ecb_regs(blocks, kSrc);
    r.now_ns = 2000;  // QEMU's clock stands still over both instructions (as under -icount)
    padlock_sys_execute(s.p, kXcryptEcb, sizeof kXcryptEcb, &r, &mem, 0, &res);
    ASSERT_EQ(res.status, PADLOCK_SYS_DONE);
    ASSERT_GT(res.cycles, 0u);
    charged += res.cycles;
    EXPECT_EQ(padlock_sys_tsc(s.p, 2000), 2 * per_us + charged) << blocks;
  }
  EXPECT_EQ(padlock_sys_tsc(s.p, 5000), 5 * per_us + charged);
  EXPECT_EQ(padlock_sys_cycles(s.p), 5 * per_us + charged);
  EXPECT_EQ(padlock_sys_tsc(s.p, 4000), 5 * per_us + charged);  // never backwards
}

// A model without the unit: #UD (§1.3); bytes that are not PadLock: #UD too.
TEST(PadlockSystem, AbsentUnitOrOtherOpcodeIsInvalid_Sec1_3) {
  Sys s("nehemiah-c5xl");  // RNG only
  Pages m;
  padlock_sys_regs r = ecb_regs(1, kSrc);
  padlock_sys_mem mem = m.mem();
  padlock_sys_result res;
  padlock_sys_execute(s.p, kXcryptEcb, sizeof kXcryptEcb, &r, &mem, 0, &res);
  EXPECT_EQ(res.status, PADLOCK_SYS_UD);
  const uint8_t nop[] = {0x0F, 0x1F, 0x00};
  padlock_sys_execute(s.p, nop, sizeof nop, &r, &mem, 0, &res);
  EXPECT_EQ(res.status, PADLOCK_SYS_UD);
}

}  // namespace
