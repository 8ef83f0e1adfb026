// isa/decoder.cpp and isa/instruction_table.hpp: every row in 32- and 64-bit mode, the
// prefix rules (§2.1, §3.1, §4.1, §5.1 "REP prefix"), lengths, and agreement with Capstone 5
// (tests/vectors/isa/encodings.vec, written by scripts/gen_isa_vectors.py).
#include "isa/decoder.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "isa/instruction_table.hpp"
#include "tests/common/vector_file.hpp"

namespace padlock::isa {
namespace {

using Bytes = std::vector<uint8_t>;

Decoded dec(const Bytes& b, CpuMode mode = CpuMode::Protected32) {
  return decode(b.data(), b.size(), mode);
}

// The guide's encoding of a row: F3 when REP is required or selects the row (F2 when REPNE
// selects it: SM2), then 0F op2 modrm.
Bytes encoding(const InsnInfo& row) {
  Bytes b;
  if (row.rep == PrefixRule::Required || row.rep == PrefixRule::Selects) b.push_back(0xF3);
  if (row.repne == PrefixRule::Selects) b.push_back(0xF2);
  b.insert(b.end(), {0x0F, row.opcode2, row.modrm});
  return b;
}

Bytes with_prefix(uint8_t p, Bytes b) {
  b.insert(b.begin(), p);
  return b;
}

const CpuMode kModes[] = {CpuMode::Protected32, CpuMode::Long64};

TEST(InstructionTable, RowsInIdOrderAndDistinct) {
  std::set<std::tuple<uint8_t, uint8_t, bool>> seen;
  for (size_t i = 0; i < kInsnCount; ++i) {
    const InsnInfo& row = kInstructions[i];
    EXPECT_EQ(static_cast<size_t>(row.id), i);
    EXPECT_EQ(&info(row.id), &row);
    EXPECT_TRUE(row.opcode2 == 0xA6 || row.opcode2 == 0xA7);
    EXPECT_GT(std::strlen(row.section), 0u);
    const bool rep_form = row.rep != PrefixRule::Absent || row.repne == PrefixRule::Selects;
    const bool repne_form = row.repne == PrefixRule::Selects;
    EXPECT_TRUE(seen.insert({row.opcode2, row.modrm, rep_form && !repne_form}).second || repne_form)
        << row.guide_name;
    // §3.1, §4.1, §5.1: A6/A7 ops other than XSTORE need REP; REPNE is undefined everywhere
    // except where it selects SM2 (openEuler sm2-zhaoxin-gmi.c: F2 0F A6 C0).
    EXPECT_EQ(row.repne, row.id == InsnId::Sm2 ? PrefixRule::Selects : PrefixRule::Undefined)
        << row.guide_name;
    // §5.1: only MONTMUL ignores 66h.
    EXPECT_EQ(row.opsize == PrefixRule::Ignored, row.id == InsnId::Montmul) << row.guide_name;
  }
  EXPECT_EQ(info(InsnId::Xstore).rep, PrefixRule::Absent);
  EXPECT_EQ(info(InsnId::RepXstore).rep, PrefixRule::Selects);
}

TEST(InstructionTable, UnitsAndNames) {
  EXPECT_STREQ(unit_name(Unit::Rng), "RNG");
  EXPECT_STREQ(unit_name(Unit::Ace), "ACE");
  EXPECT_STREQ(unit_name(Unit::Phe), "PHE");
  EXPECT_STREQ(unit_name(Unit::Pmm), "PMM");
  EXPECT_STREQ(unit_name(Unit::Phe2), "PHE2");
  EXPECT_STREQ(unit_name(Unit::Ccs), "CCS");
  EXPECT_STREQ(unit_name(Unit::Sm2), "SM2");
  EXPECT_STREQ(unit_name(Unit::Rsa), "RSA");
  EXPECT_STREQ(unit_name(Unit::Rng2), "RNG2");
  EXPECT_EQ(info(InsnId::Xsha512).unit, Unit::Phe2);
  EXPECT_EQ(info(InsnId::CcsEncrypt).unit, Unit::Ccs);
  for (InsnId id : {InsnId::Montmul2, InsnId::Xmodexp, InsnId::Xrng2}) {
    EXPECT_FALSE(info(id).modelled) << info(id).guide_name;
  }
  EXPECT_EQ(info(InsnId::Xstore).unit, Unit::Rng);
  EXPECT_EQ(info(InsnId::Montmul).unit, Unit::Pmm);
  EXPECT_EQ(info(InsnId::Xsha256).unit, Unit::Phe);
  for (InsnId id : {InsnId::XcryptEcb, InsnId::XcryptCbc, InsnId::XcryptCtr, InsnId::XcryptCfb,
                    InsnId::XcryptOfb}) {
    EXPECT_TRUE(is_xcrypt(id));
  }
  EXPECT_FALSE(is_xcrypt(InsnId::Xsha1));
}

// §0 / §2.1 / §3.1 / §4.1 / §5.1: every row decodes in both modes with its length and the
// mode's default address size.
TEST(Decoder, EveryRowBothModes_S0) {
  for (const InsnInfo& row : kInstructions) {
    for (CpuMode mode : kModes) {
      const Bytes b = encoding(row);
      const Decoded d = dec(b, mode);
      EXPECT_EQ(d.status, DecodeStatus::Ok) << row.guide_name;
      EXPECT_EQ(d.id, row.id) << row.guide_name;
      EXPECT_EQ(d.length, b.size()) << row.guide_name;
      EXPECT_EQ(d.addr_size, mode == CpuMode::Long64 ? 64 : 32) << row.guide_name;
      EXPECT_FALSE(d.repne || d.rep_missing || d.opsize || d.lock || d.segment_override || d.rex);
    }
  }
}

// §2.1: REP selects REP XSTORE; without it the same bytes are XSTORE.
TEST(Decoder, RepSelectsXstoreForm_S2_1) {
  EXPECT_EQ(dec({0x0F, 0xA7, 0xC0}).id, InsnId::Xstore);
  EXPECT_EQ(dec({0xF3, 0x0F, 0xA7, 0xC0}).id, InsnId::RepXstore);
  EXPECT_EQ(dec({0xF3, 0xF3, 0x0F, 0xA7, 0xC0}).id, InsnId::RepXstore);
}

// §3.1 "XCRYPT instructions must be used with the REP prefix", §4.1, §5.1: #UD without it.
TEST(Decoder, RepRequired_S3_1_S4_1_S5_1) {
  for (const InsnInfo& row : kInstructions) {
    if (row.rep != PrefixRule::Required) continue;
    for (CpuMode mode : kModes) {
      const Decoded d = dec({0x0F, row.opcode2, row.modrm}, mode);
      EXPECT_EQ(d.status, DecodeStatus::InvalidOpcode) << row.guide_name;
      EXPECT_TRUE(d.rep_missing) << row.guide_name;
      EXPECT_EQ(d.id, row.id);
      EXPECT_EQ(d.length, 3);
    }
  }
}

// REPNE is undefined (§2.1, §3.1, §4.1, §5.1): flagged; our choice runs it as REP. F2 and F3
// are one prefix group: the last one counts.
TEST(Decoder, RepneFlagged_S2_1_S3_1) {
  for (const InsnInfo& row : kInstructions) {
    const Decoded d = dec({0xF2, 0x0F, row.opcode2, row.modrm});
    EXPECT_EQ(d.status, DecodeStatus::Ok) << row.guide_name;
    // F2 0F A6 C0 is SM2 (the decoder's row; a chip without SM2 runs REPNE MONTMUL:
    // Padlock::resolve).
    const bool sm2 = row.opcode2 == 0xA6 && row.modrm == 0xC0;
    EXPECT_EQ(d.repne, !sm2) << row.guide_name;
    EXPECT_EQ(d.id, row.id == InsnId::Xstore ? InsnId::RepXstore : sm2 ? InsnId::Sm2 : row.id);
  }
  // F3 last: REP MONTMUL; F2 last: SM2.
  EXPECT_EQ(dec({0xF2, 0xF3, 0x0F, 0xA6, 0xC0}).id, InsnId::Montmul);
  EXPECT_EQ(dec({0xF3, 0xF2, 0x0F, 0xA6, 0xC0}).id, InsnId::Sm2);
  EXPECT_EQ(dec({0x0F, 0xA6, 0xC0}).id, InsnId::Montmul) << "no prefix: MONTMUL without REP";
  const Decoded f2f3 = dec({0xF2, 0xF3, 0x0F, 0xA7, 0xC8});
  EXPECT_EQ(f2f3.status, DecodeStatus::Ok);
  EXPECT_FALSE(f2f3.repne) << "F3 came last";
  const Decoded f3f2 = dec({0xF3, 0xF2, 0x0F, 0xA7, 0xC8});
  EXPECT_EQ(f3f2.status, DecodeStatus::Ok);
  EXPECT_TRUE(f3f2.repne) << "F2 came last";
}

// §3.1, §4.1 "An operand-size prefix causes an Invalid Instruction exception"; XSTORE follows
// the same rule (our choice, docs/isa.md); §5.1 MONTMUL uses full EAX/ECX regardless.
TEST(Decoder, OperandSizePrefix_S3_1_S4_1_S5_1) {
  for (const InsnInfo& row : kInstructions) {
    for (CpuMode mode : kModes) {
      const Decoded d = dec(with_prefix(0x66, encoding(row)), mode);
      EXPECT_TRUE(d.opsize);
      EXPECT_EQ(d.id, row.id);
      EXPECT_EQ(d.length, encoding(row).size() + 1);
      EXPECT_EQ(d.status,
                row.id == InsnId::Montmul ? DecodeStatus::Ok : DecodeStatus::InvalidOpcode)
          << row.guide_name;
    }
  }
}

// LOCK on an instruction without a memory destination operand is #UD on x86.
TEST(Decoder, LockPrefixUd) {
  for (const InsnInfo& row : kInstructions) {
    for (CpuMode mode : kModes) {
      const Decoded d = dec(with_prefix(0xF0, encoding(row)), mode);
      EXPECT_EQ(d.status, DecodeStatus::InvalidOpcode) << row.guide_name;
      EXPECT_TRUE(d.lock);
    }
  }
}

// §2.1, §3.1, §4.1, §5.1: 67h selects the other address size (32 -> 16, 64 -> 32).
TEST(Decoder, AddressSizePrefix_S3_1) {
  for (const InsnInfo& row : kInstructions) {
    EXPECT_EQ(dec(with_prefix(0x67, encoding(row))).addr_size, 16) << row.guide_name;
    EXPECT_EQ(dec(with_prefix(0x67, encoding(row)), CpuMode::Long64).addr_size, 32);
    // Repeating 67h does not toggle back.
    EXPECT_EQ(dec(with_prefix(0x67, with_prefix(0x67, encoding(row)))).addr_size, 16);
  }
  // Prefix order does not matter: F3 67 is REP XSTORE with a 16-bit address.
  const Decoded d = dec({0xF3, 0x67, 0x0F, 0xA7, 0xC0});
  EXPECT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.id, InsnId::RepXstore);
  EXPECT_EQ(d.addr_size, 16);
  EXPECT_EQ(d.length, 5);
}

// §2.1 "Any segment prefix on the instruction is ignored" (ES is always used).
TEST(Decoder, SegmentOverridesIgnored_S2_1) {
  for (uint8_t seg : {0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65}) {
    for (const InsnInfo& row : kInstructions) {
      for (CpuMode mode : kModes) {
        const Decoded d = dec(with_prefix(seg, encoding(row)), mode);
        EXPECT_EQ(d.status, DecodeStatus::Ok);
        EXPECT_EQ(d.id, row.id);
        EXPECT_TRUE(d.segment_override);
        EXPECT_EQ(d.length, encoding(row).size() + 1);
      }
    }
  }
}

// REX in 64-bit mode is accepted and changes nothing; it counts only right before 0F; in
// 32-bit mode 40-4F are INC/DEC, so the bytes are not a PadLock instruction.
TEST(Decoder, RexPrefix) {
  for (const InsnInfo& row : kInstructions) {
    Bytes b = encoding(row);
    b.insert(b.end() - 3, 0x48);
    const Decoded d = dec(b, CpuMode::Long64);
    EXPECT_EQ(d.status, DecodeStatus::Ok) << row.guide_name;
    EXPECT_TRUE(d.rex);
    EXPECT_EQ(d.id, row.id);
    EXPECT_EQ(d.addr_size, 64) << "REX.W does not change the address size";
    EXPECT_EQ(d.length, b.size());
    EXPECT_EQ(dec(b).status, DecodeStatus::NotPadlock) << "48 is DEC EAX in 32-bit mode";
  }
  // A legacy prefix after REX cancels it (still a PadLock instruction).
  const Decoded d = dec({0x41, 0xF3, 0x0F, 0xA7, 0xC8}, CpuMode::Long64);
  EXPECT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_FALSE(d.rex);
  EXPECT_EQ(d.length, 5);
}

TEST(Decoder, NotPadlock) {
  const Bytes cases[] = {
      {0x0F, 0xA7, 0xC1}, {0x0F, 0xA7, 0xE1}, {0x0F, 0xA6, 0xC9}, {0x0F, 0xA6, 0xE9},
      {0x0F, 0xA7, 0xF1}, {0x0F, 0xA7, 0x00}, {0x0F, 0x0B},       {0x90},
      {0x0F, 0xA2},       {0xF3, 0x90},       {0x0F, 0xA8, 0xC0}, {0x66, 0x0F, 0xA5, 0xC0}};
  for (const Bytes& b : cases) {
    for (CpuMode mode : kModes) {
      EXPECT_EQ(dec(b, mode).status, DecodeStatus::NotPadlock) << std::hex << int(b[0]);
    }
  }
}

TEST(Decoder, TruncatedInput) {
  const Bytes full = {0xF3, 0x0F, 0xA7, 0xC8};
  for (size_t n = 0; n < full.size(); ++n) {
    const Decoded d = decode(full.data(), n, CpuMode::Protected32);
    EXPECT_EQ(d.status, DecodeStatus::NotPadlock) << n;
    EXPECT_EQ(d.length, 0) << n;
  }
  EXPECT_EQ(decode(full.data(), full.size(), CpuMode::Protected32).status, DecodeStatus::Ok);
}

// x86 instructions are at most 15 bytes: 11 prefixes + F3 0F A7 C0 fit, 12 do not (the CPU
// raises #GP; the decoder reports NotPadlock). Bytes past 15 are never examined.
TEST(Decoder, FifteenByteLimit) {
  Bytes b(11, 0x3E);
  b.insert(b.end(), {0xF3, 0x0F, 0xA7, 0xC0});
  ASSERT_EQ(b.size(), 15u);
  Decoded d = dec(b);
  EXPECT_EQ(d.status, DecodeStatus::Ok);
  EXPECT_EQ(d.length, 15);
  b.insert(b.begin(), 0x3E);
  d = dec(b);
  EXPECT_EQ(d.status, DecodeStatus::NotPadlock);
  Bytes many(40, 0x26);
  many.insert(many.end(), {0x0F, 0xA7, 0xC0});
  EXPECT_EQ(dec(many).status, DecodeStatus::NotPadlock);
}

// Capstone 5 disagreements with the x86 rules, each with its reason. They are checked, so a
// Capstone upgrade that fixes one shows up here.
struct KnownDisagreement {
  const char* section;
  const char* bytes;
  const char* why;
};
constexpr KnownDisagreement kCapstoneQuirks[] = {
    {"32", "f3670fa7c0",
     "Capstone 5.0 decodes nothing for F3 before 67h in 32-bit mode although it decodes 67 F3 "
     "and the 64-bit form; x86 accepts legacy prefixes in any order"},
};

// The table's mnemonics and our lengths equal Capstone 5's for the same bytes.
TEST(Decoder, AgreesWithCapstone5) {
  const auto records = test::read_vectors("isa/encodings.vec");
  ASSERT_GT(records.size(), 300u);
  std::set<std::string> mnemonics;
  for (const InsnInfo& row : kInstructions) mnemonics.insert(row.mnemonic);
  std::set<std::string> seen_mnemonics;
  for (const test::VectorRecord& r : records) {
    SCOPED_TRACE("encodings.vec line " + std::to_string(r.line) + " [" + r.section + "] " +
                 r.str("Bytes"));
    const CpuMode mode = r.section == "64" ? CpuMode::Long64 : CpuMode::Protected32;
    const Bytes b = r.hex("Bytes");
    const Decoded d = dec(b, mode);
    const std::string cs = r.str("Mnemonic");
    bool quirk = false;
    for (const KnownDisagreement& k : kCapstoneQuirks) {
      quirk |= r.section == k.section && r.str("Bytes") == k.bytes;
    }
    if (quirk) {
      EXPECT_EQ(cs, "none") << "Capstone changed: remove the quirk entry";
      EXPECT_EQ(d.status, DecodeStatus::Ok);
      continue;
    }
    // Capstone 5 predates Zhaoxin's instructions: it decodes none of them, and F2 0F A6 C0
    // (SM2) as REPNE MONTMUL. The decoder follows Zhaoxin (docs/isa.md).
    const bool zhaoxin_row = d.status != DecodeStatus::NotPadlock && d.info().unit >= Unit::Phe2;
    if (zhaoxin_row && (cs == "none" || (d.id == InsnId::Sm2 && cs == "montmul"))) {
      seen_mnemonics.insert(d.info().mnemonic);
      continue;
    }
    if (mnemonics.count(cs) != 0) {
      seen_mnemonics.insert(cs);
      ASSERT_NE(d.status, DecodeStatus::NotPadlock);
      EXPECT_STREQ(d.info().mnemonic, cs.c_str());
      EXPECT_EQ(d.length, r.num("Length"));
    } else if (cs == "none") {
      EXPECT_NE(d.status, DecodeStatus::Ok) << "Capstone decodes nothing";
    } else {
      EXPECT_EQ(d.status, DecodeStatus::NotPadlock) << "Capstone: " << cs;
    }
  }
  EXPECT_EQ(seen_mnemonics, mnemonics) << "every table mnemonic appears in the vectors";
}

}  // namespace
}  // namespace padlock::isa
