// Capstone instructions -> the timing model's view (emulator/cpu/x86_classify.hpp): keys that
// match the measured rows, register read/write sets, REP string keys; and block costs from
// the block model through BlockCache (emulator/cpu/block_cache.hpp).
#include "emulator/cpu/x86_classify.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "emulator/cpu/block_cache.hpp"
#include "emulator/memory/address_space.hpp"

namespace padlock::emu {
namespace {

using timing::InsnClass;
using timing::reg_bit;
using timing::RegMask;
namespace reg = timing::reg;

constexpr RegMask kEax = reg_bit(reg::kGpr + 0), kEcx = reg_bit(reg::kGpr + 1),
                  kEsp = reg_bit(reg::kGpr + 4), kFlags = reg_bit(reg::kFlags);

std::vector<uint8_t> bytes(const char* hex) {
  std::vector<uint8_t> out;
  for (const char* p = hex; *p != '\0';) {
    if (*p == ' ') {
      ++p;
      continue;
    }
    out.push_back(static_cast<uint8_t>(std::stoul(std::string(p, 2), nullptr, 16)));
    p += 2;
  }
  return out;
}

// Decodes the one instruction in `hex` and describes it.
InsnTimingInfo describe(const char* hex, bool guest64 = false) {
  csh cs = 0;
  EXPECT_EQ(cs_open(CS_ARCH_X86, guest64 ? CS_MODE_64 : CS_MODE_32, &cs), CS_ERR_OK);
  cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
  const std::vector<uint8_t> code = bytes(hex);
  cs_insn* insn = nullptr;
  InsnTimingInfo info;
  if (cs_disasm(cs, code.data(), code.size(), 0x1000, 1, &insn) == 1) {
    info = describe_insn(cs, *insn, guest64);
    cs_free(insn, 1);
  } else {
    ADD_FAILURE() << "cannot decode " << hex;
  }
  cs_close(&cs);
  return info;
}

TEST(X86Classify, KeysMatchTheMeasuredForms) {
  struct Case {
    const char* hex;
    const char* key;
  };
  const Case cases[] = {
      {"01 c8", "ADD r32, r32"},
      {"03 01", "ADD r32, m32"},
      {"01 08", "ADD m32, r32"},
      {"83 c0 05", "ADD r32, i8"},
      {"05 00 01 00 00", "ADD r32, i32"},
      {"d1 e0", "SHL r32, 1"},
      {"c1 e0 05", "SHL r32, i8"},
      {"d3 e0", "SHL r32, cl"},
      {"0f a3 c8", "BT r32, r32"},
      {"f0 01 08", "LOCK ADD m32, r32"},
      {"8d 04 08", "LEA r32, m"},
      {"0f 45 c1", "CMOVcc r32, r32"},
      {"0f 92 c0", "SETcc r8"},
      {"60", "PUSHAL"},
      {"61", "POPAL"},
      {"f7 f1", "DIV r32"},
      {"8b 00", "MOV r32, m32"},
      {"89 00", "MOV m32, r32"},
      {"a5", "MOVSD"},
      {"f2 0f 10 c1", "MOVSD xmm, xmm"},
      {"0f b6 00", "MOVZX r32, m8"},
      {"66 01 c8", "ADD r16, r16"},
      {"0f 18 00", "PREFETCHNTA m"},
      {"dc c1", "FADD st, st"},
  };
  for (const Case& c : cases) EXPECT_STREQ(describe(c.hex).key, c.key) << c.hex;
  EXPECT_STREQ(describe("48 01 c8", true).key, "ADD r64, r64");
  // Every key above but the x87 one names a row of Esther's dump, directly or by a rule.
  for (const Case& c : cases) {
    const InsnTimingInfo t = describe(c.hex);
    const timing::InsnCost cost =
        timing::resolve_insn_cost(timing::X86Core::Esther, t.key_view(), t.cls, t.reads_memory);
    if (std::strcmp(c.key, "FADD st, st") != 0 && std::strcmp(c.key, "PREFETCHNTA m") != 0)
      EXPECT_NE(cost.basis, timing::CostBasis::Class) << c.key;
  }
}

TEST(X86Classify, RegisterSetsAndMemory) {
  const InsnTimingInfo add = describe("01 c8");  // add eax, ecx
  EXPECT_EQ(add.reads, kEax | kEcx);
  EXPECT_EQ(add.writes, kEax | kFlags);
  EXPECT_FALSE(add.reads_memory);
  EXPECT_EQ(add.cls, InsnClass::Alu);
  const InsnTimingInfo load = describe("8b 01");  // mov eax, [ecx]: ECX is the address
  EXPECT_EQ(load.addr_reads, kEcx);
  EXPECT_EQ(load.reads, 0u);
  EXPECT_EQ(load.writes, kEax);
  EXPECT_TRUE(load.reads_memory);
  EXPECT_EQ(load.cls, InsnClass::Load);
  const InsnTimingInfo subreg = describe("00 e0");  // add al, ah: one register
  EXPECT_EQ(subreg.reads, kEax);
  const InsnTimingInfo push = describe("50");  // push eax
  EXPECT_EQ(push.reads, kEax | kEsp);
  EXPECT_EQ(push.writes, kEsp);
  const InsnTimingInfo jcc = describe("74 00");
  EXPECT_EQ(jcc.cls, InsnClass::Branch);
  EXPECT_EQ(jcc.reads, kFlags);
  const InsnTimingInfo lea = describe("8d 04 08");  // lea does not load
  EXPECT_FALSE(lea.reads_memory);
  EXPECT_TRUE(describe("66 0f ef c0").sse);  // pxor xmm0, xmm0
  // x87: Capstone lists no result register; the destination stands in.
  EXPECT_EQ(describe("dc c1").writes, reg_bit(reg::kSt + 1));  // fadd st(1), st(0)
}

TEST(X86Classify, RepStringInstructions) {
  const InsnTimingInfo movs = describe("f3 a5");
  EXPECT_TRUE(movs.rep_string);
  EXPECT_STREQ(movs.rep_key, "REP MOVSD");
  EXPECT_EQ(movs.count_bits, 32u);
  EXPECT_EQ(describe("67 f3 a5").count_bits, 16u);  // address size 16: CX
  EXPECT_STREQ(describe("f3 a6").rep_key, "REPE CMPSB");
  EXPECT_STREQ(describe("f2 ae").rep_key, "REPNE SCASB");
  EXPECT_STREQ(describe("f3 aa").rep_key, "REP STOSB");
  const InsnTimingInfo q = describe("f3 48 a5", true);
  EXPECT_STREQ(q.rep_key, "REP MOVSQ");
  EXPECT_EQ(q.count_bits, 64u);
  EXPECT_FALSE(describe("a5").rep_string);           // movsd without REP
  EXPECT_FALSE(describe("f3 0f 10 c1").rep_string);  // movss (F3 is part of the opcode)
}

// A block through BlockCache: the block model's clocks, and REP string blocks.
class BlockCacheCost : public ::testing::Test {
 protected:
  static constexpr uint64_t kBase = 0x10000;
  AddressSpace mem{false};
  void SetUp() override {
    ASSERT_TRUE(mem.map_anonymous(kBase, AddressSpace::kPageSize, kPageRead | kPageWrite));
  }
  const BlockInfo& block(BlockCache& c, uint64_t at, const char* hex) {
    const std::vector<uint8_t> code = bytes(hex);
    std::memcpy(mem.host(at), code.data(), code.size());
    return c.lookup(at, static_cast<uint32_t>(code.size()));
  }
};

TEST_F(BlockCacheCost, LoadUseStallIsInTheBlockCost) {
  BlockCache c(false, mem, timing::X86Core::Esther);
  const timing::MeasuredCore& e = timing::measured_core(timing::X86Core::Esther);
  // mov eax, [ecx]; mov edx, [eax]: the second load's address waits for the first load.
  const BlockInfo& chase = block(c, kBase, "8b 01 8b 10");
  // mov eax, [ecx]; mov edx, [ebx]: independent, one after the other.
  const BlockInfo& indep = block(c, kBase + 0x100, "8b 01 8b 13");
  // Each load's value is ready for data one clock after it issues.
  EXPECT_EQ(chase.cost, static_cast<uint32_t>(e.load_use.clocks + 1));
  EXPECT_EQ(indep.cost, 2u);
  EXPECT_EQ(chase.rep.count_bits, 0u);
  // The address registers are address reads, not data reads.
  const InsnTimingInfo load = describe("8b 10");  // mov edx, [eax]
  EXPECT_EQ(load.addr_reads, kEax);
  EXPECT_EQ(load.reads, 0u);
  const InsnTimingInfo both = describe("03 00");  // add eax, [eax]
  EXPECT_EQ(both.addr_reads, kEax);
  EXPECT_EQ(both.reads, kEax);
}

TEST_F(BlockCacheCost, RepStringBlocks) {
  BlockCache c(false, mem, timing::X86Core::Esther);
  const BlockInfo& alone = block(c, kBase, "f3 a5");  // rep movsd: charged by the hook
  EXPECT_EQ(alone.cost, 0u);
  EXPECT_TRUE(alone.rep.at_start);
  EXPECT_EQ(alone.rep.pc, kBase);
  EXPECT_EQ(alone.rep.count_bits, 32u);
  ASSERT_NE(alone.rep.cost.row, nullptr);
  EXPECT_STREQ(alone.rep.cost.row->key, "REP MOVSD");
  const BlockInfo& after = block(c, kBase + 0x100, "b9 10 00 00 00 f3 a5");  // mov ecx, 16
  EXPECT_FALSE(after.rep.at_start);
  EXPECT_EQ(after.rep.pc, kBase + 0x105);
  EXPECT_GE(after.cost, 1u);
  // Without timing there are no costs and no REP charges.
  BlockCache plain(false, mem);
  EXPECT_EQ(plain.lookup(kBase, 2).rep.count_bits, 0u);
  EXPECT_EQ(plain.lookup(kBase, 2).cost, 1u);
}

}  // namespace
}  // namespace padlock::emu
