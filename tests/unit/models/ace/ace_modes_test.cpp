// Per-mode register and memory rules of REP XCRYPT (§3.1, §3.2): IV updates, digest mode,
// ALIGN, ECB pairs, ECX = 0, address sizes, the CTR counter, control-word fields.
#include <algorithm>

#include "ace_rig.hpp"
#include "models/ace/aes_core.hpp"

namespace padlock::test {
namespace {

const Bytes kIv = hex("000102030405060708090a0b0c0d0e0f");

struct Rig : AceRig {
  explicit Rig(const char* cpu = "esther-c5j-s9") : AceRig(cpu) {
    set_key(kSp800Key);
    set_iv(kIv);
  }
};

// §3.1 "What changes": CBC/CFB encryption move EAX to the last ciphertext block and
// leave the IV memory alone, so BAES's single-block Monte Carlo loop (§6.2), which
// chains through the IV buffer itself, gets standard CBC.
TEST(AceModes, CbcEncryptMovesEaxNotIvMemory_BaesMonteCarlo_Sec3_1_Sec6_2) {
  Rig r;
  r.set_cw(0x00A);  // §6.2 encrypt control word
  Bytes key(16, 0), iv(16, 0), text(16, 0);
  Bytes ref_key = key, ref_iv = iv, ref_text = text, ref_last;
  for (int outer = 0; outer < 3; ++outer) {
    r.set_key(key);
    r.pushf_popf();  // §6.2: pushfl/popfl once per outer iteration
    Bytes last;
    for (int inner = 0; inner < 200; ++inner) {
      r.put(Layout::kIn, text);
      r.set_iv(iv);
      r.load_regs(1);
      ASSERT_EQ(r.exec(isa::InsnId::XcryptCbc).status, Status::Completed);
      EXPECT_EQ(r.s[Gpr::AX], Layout::kOut);                  // the new IV is the ciphertext
      EXPECT_EQ(to_hex(r.get(Layout::kIv, 16)), to_hex(iv));  // IV memory unchanged
      last = r.get(Layout::kOut, 16);
      text = iv;  // next plaintext = previous IV, IV = new ciphertext
      iv = last;
    }
    for (int i = 0; i < 16; ++i) key[i] ^= last[i];
    // The same procedure with OpenSSL.
    for (int inner = 0; inner < 200; ++inner) {
      ref_last = evp("CBC", ref_key, ref_iv, ref_text, true);
      ref_text = ref_iv;
      ref_iv = ref_last;
    }
    for (int i = 0; i < 16; ++i) ref_key[i] ^= ref_last[i];
    EXPECT_EQ(to_hex(last), to_hex(ref_last));
  }
}

// §3.1 DGEST (ACE2): CBC-MAC and CFB-MAC leave EDI alone; every block lands at EDI, so
// EDI ends holding the last block of the ordinary encryption (the MAC), and EAX = EDI.
TEST(AceModes, DigestModeKeepsEdiAndLeavesMac_Sec3_1_Sec3_2) {
  for (const char* mode : {"CBC", "CFB"}) {
    Rig r;
    const Bytes pt = random_bytes(16 * 7, 1);
    r.set_cw(0x01A);  // §6.2 CBC-MAC control word
    r.put(Layout::kIn, pt);
    const Outcome o = r.run(mode, 7);
    ASSERT_EQ(o.status, Status::Completed) << mode;
    const Bytes full = evp(mode, kSp800Key, kIv, pt, true);
    EXPECT_EQ(r.s[Gpr::DI], Layout::kOut) << mode;
    EXPECT_EQ(r.s[Gpr::SI], Layout::kIn + 16 * 7) << mode;
    EXPECT_EQ(to_hex(r.get(Layout::kOut, 16)), to_hex(Bytes(full.end() - 16, full.end()))) << mode;
    EXPECT_EQ(to_hex(r.get(Layout::kOut + 16, 16)), to_hex(Bytes(16, 0))) << "nothing past EDI+16";
    EXPECT_EQ(r.s[Gpr::AX], Layout::kOut) << mode;
  }
}

// §3.2 DGEST on Nehemiah is undefined: ignored (EDI advances), reported.
TEST(AceModes, DigestOnNehemiahIgnoredAndReported_Sec3_2) {
  Rig r("nehemiah-c5p");
  const Bytes pt = random_bytes(64, 2);
  r.set_cw(0x01A);
  r.put(Layout::kIn, pt);
  ASSERT_EQ(r.run("CBC", 4).status, Status::Completed);
  EXPECT_EQ(r.s[Gpr::DI], Layout::kOut + 64);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 64)), to_hex(evp("CBC", kSp800Key, kIv, pt, true)));
  EXPECT_EQ(r.diag.count(Diag::DgestOnNehemiah), 1);
}

// §3.2 note: DGEST in ECB, CTR, OFB is not defined: ignored and reported.
TEST(AceModes, DigestIgnoredInEcbCtrOfb_Sec3_2) {
  for (const char* mode : {"ECB", "CTR", "OFB"}) {
    Rig r;
    r.set_cw(0x01A);
    r.put(Layout::kIn, random_bytes(48, 3));
    ASSERT_EQ(r.run(mode, 3).status, Status::Completed);
    EXPECT_EQ(r.s[Gpr::DI], Layout::kOut + 48) << mode;
    EXPECT_EQ(r.diag.count(Diag::DgestIgnoredMode), 1) << mode;
  }
}

// §3.1/§3.2 ALIGN = 1 (ACE2): chaining modes take any ESI/EDI alignment.
TEST(AceModes, AlignBitAcceptsUnalignedData_Sec3_1_Sec3_2) {
  for (const char* mode : {"CBC", "CFB", "OFB", "CTR"}) {
    for (bool decrypt : {false, true}) {
      Rig r;
      const Bytes pt = random_bytes(16 * 5, 4);
      const Bytes ct = std::string(mode) == "CTR" ? ace_ctr_reference(kSp800Key, kIv, pt)
                                                  : evp(mode, kSp800Key, kIv, pt, true);
      const bool crypt = decrypt && (std::string(mode) == "CBC" || std::string(mode) == "CFB");
      r.set_cw(0x02A | (crypt ? cwf::kDecrypt : 0));
      r.put(Layout::kIn + 3, decrypt ? ct : pt);
      r.load_regs(5, Layout::kIn + 3, Layout::kOut + 9);
      ASSERT_EQ(r.exec(xcrypt_id(mode)).status, Status::Completed) << mode;
      EXPECT_EQ(to_hex(r.get(Layout::kOut + 9, pt.size())), to_hex(decrypt ? pt : ct))
          << mode << decrypt;
      EXPECT_EQ(r.s[Gpr::SI], Layout::kIn + 3 + 80);
      EXPECT_EQ(r.s[Gpr::DI], Layout::kOut + 9 + 80);
    }
  }
}

// ALIGN = 1, CBC/CFB encryption (our choice): the chain block goes to the aligned scratch
// after the control word and EAX points there, so EAX stays 16-byte aligned (§3.1) and
// re-execution continues the chain.
TEST(AceModes, AlignBitKeepsNewIvInScratch_Sec3_1_Sec3_2) {
  Rig r;
  const Bytes pt = random_bytes(16 * 6, 5);
  r.set_cw(0x02A);
  r.put(Layout::kIn + 1, pt);
  r.load_regs(3, Layout::kIn + 1, Layout::kOut + 1);
  ASSERT_EQ(r.exec(isa::InsnId::XcryptCbc).status, Status::Completed);
  const Bytes full = evp("CBC", kSp800Key, kIv, pt, true);
  EXPECT_EQ(r.s[Gpr::AX], Layout::kCw + 16);
  EXPECT_EQ(to_hex(r.get(Layout::kCw + 16, 16)),
            to_hex(Bytes(full.begin() + 32, full.begin() + 48)));
  // Continue with the returned EAX, ESI, EDI: the second half chains on.
  r.s[Gpr::CX] = 3;
  ASSERT_EQ(r.exec(isa::InsnId::XcryptCbc).status, Status::Completed);
  EXPECT_EQ(to_hex(r.get(Layout::kOut + 1, pt.size())), to_hex(full));
}

// §3.2: ECB still requires alignment with ALIGN = 1; ALIGN = 0 requires it everywhere.
TEST(AceModes, MisalignedDataRaisesGp_Sec3_1_Sec3_2) {
  struct Case {
    const char* mode;
    uint32_t cw;
    uint64_t in, out;
    uint64_t bad;
  };
  const Case cases[] = {
      {"ECB", 0x02A, Layout::kIn + 4, Layout::kOut, Layout::kIn + 4},
      {"ECB", 0x02A, Layout::kIn, Layout::kOut + 8, Layout::kOut + 8},
      {"CBC", 0x00A, Layout::kIn + 1, Layout::kOut, Layout::kIn + 1},
      {"OFB", 0x00A, Layout::kIn, Layout::kOut + 2, Layout::kOut + 2},
  };
  for (const Case& c : cases) {
    Rig r;
    r.set_cw(c.cw);
    r.load_regs(2, c.in, c.out);
    const ArchState before = r.s;
    const Outcome o = r.exec(xcrypt_id(c.mode));
    EXPECT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::GeneralProtection) << c.mode;
    EXPECT_EQ(o.fault.address, c.bad);
    EXPECT_EQ(0, std::memcmp(r.s.gpr, before.gpr, sizeof before.gpr));
  }
}

// §3.2 ALIGN on Nehemiah is undefined: ignored, so unaligned data still raises #GP.
TEST(AceModes, AlignBitOnNehemiahIgnored_Sec3_2) {
  Rig r("nehemiah-c5p");
  r.set_cw(0x02A);
  r.load_regs(1, Layout::kIn + 1, Layout::kOut);
  const Outcome o = r.exec(isa::InsnId::XcryptCbc);
  EXPECT_EQ(o.fault.kind, FaultKind::GeneralProtection);
  EXPECT_EQ(r.diag.count(Diag::AlignOnNehemiah), 1);
}

// §3.2: with ALIGN = 1 the 128 bytes at ES:EDX must be accessible (read and write).
TEST(AceModes, AlignBitNeeds128BytesAtEdx_Sec3_2) {
  Rig r;
  r.mem.map(0x80000, 0x1000);
  const uint64_t cw_at = 0x80000 + 0x1000 - 64;  // 64 bytes before an unmapped page
  r.put(cw_at, Bytes{0x2A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  r.load_regs(1);
  r.s[Gpr::DX] = cw_at;
  Outcome o = r.exec(isa::InsnId::XcryptCbc);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, 0x81000u);
  // Read-only scratch: the microcode writes there.
  r.mem.map(0x81000, 0x1000, FlatMemory::kRead);
  r.pushf_popf();
  r.load_regs(1);
  r.s[Gpr::DX] = cw_at;
  o = r.exec(isa::InsnId::XcryptCbc);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, 0x81000u);
  EXPECT_TRUE(o.fault.write);
  // ALIGN = 0 needs only the 16-byte control word.
  r.put(cw_at, Bytes{0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  r.pushf_popf();
  r.load_regs(1);
  r.s[Gpr::DX] = cw_at;
  EXPECT_EQ(r.exec(isa::InsnId::XcryptCbc).status, Status::Completed);
}

// §3.1 REP prefix, §3.3: ECB with odd ECX reads one more block than it stores; ESI and
// EDI advance by the bytes stored.
TEST(AceModes, EcbOddCountReadsExtraBlockStoresOnlyEcx_Sec3_1_Sec3_3) {
  Rig r;
  r.set_cw(0x00A);
  const Bytes pt = random_bytes(64, 6);
  r.put(Layout::kIn, pt);
  r.put(Layout::kOut + 48, Bytes(16, 0xEE));  // canary where a 4th block would go
  ASSERT_EQ(r.run("ECB", 3).status, Status::Completed);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 48)),
            to_hex(evp("ECB", kSp800Key, {}, Bytes(pt.begin(), pt.begin() + 48), true)));
  EXPECT_EQ(to_hex(r.get(Layout::kOut + 48, 16)), to_hex(Bytes(16, 0xEE)));
  EXPECT_EQ(r.s[Gpr::SI], Layout::kIn + 48);
  EXPECT_EQ(r.s[Gpr::DI], Layout::kOut + 48);
  // The extra block is really read: with it unmapped, the pair load faults after the
  // first pair is stored.
  Rig f;
  f.set_cw(0x00A);
  f.mem.map(0x80000, 0x1000);
  const uint64_t in = 0x81000 - 48;  // blocks 0-2 mapped, block 3 is the next page
  f.load_regs(3, in, Layout::kOut);
  const Outcome o = f.exec(isa::InsnId::XcryptEcb);
  EXPECT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, 0x81000u);
  EXPECT_FALSE(o.fault.write);
  EXPECT_EQ(f.s[Gpr::CX], 1u);
  EXPECT_EQ(f.s[Gpr::SI], in + 32);
  EXPECT_EQ(f.s[Gpr::DI], Layout::kOut + 32);
}

// §1.7, §3.3: ECX = 0 loads the first blocks before testing ECX, so it can page fault;
// otherwise it does nothing (10..27 clocks).
TEST(AceModes, EcxZeroLoadsFirstBlocksAndCanFault_Sec1_7_Sec3_3) {
  for (const char* mode : {"ECB", "CBC"}) {
    Rig r;
    r.set_cw(0x00A);
    r.load_regs(0, 0x7000000, Layout::kOut);  // unmapped input
    const ArchState before = r.s;
    Outcome o = r.exec(xcrypt_id(mode));
    EXPECT_EQ(o.status, Status::Faulted) << mode;
    EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
    EXPECT_EQ(o.fault.address, 0x7000000u);
    EXPECT_EQ(0, std::memcmp(r.s.gpr, before.gpr, sizeof before.gpr));

    r.load_regs(0);
    r.put(Layout::kOut, Bytes(32, 0x55));
    o = r.exec(xcrypt_id(mode));
    EXPECT_EQ(o.status, Status::Completed);
    EXPECT_EQ(o.cycles, 27u) << "EFLAGS[30] = 0";
    EXPECT_FALSE(o.key_reloaded);
    EXPECT_FALSE(r.s.eflags30());
    EXPECT_EQ(r.s[Gpr::SI], Layout::kIn);
    EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(Bytes(32, 0x55)));
    r.load_regs(1);
    ASSERT_EQ(r.exec(xcrypt_id(mode)).status, Status::Completed);  // loads the key
    r.load_regs(0);
    EXPECT_EQ(r.exec(xcrypt_id(mode)).cycles, 10u) << "EFLAGS[30] = 1";
    EXPECT_TRUE(r.s.eflags30());
  }
}

// §3.1 REP prefix: with 67h, SI/DI/CX/AX are 16-bit: offsets wrap at 64 KB and the upper
// register halves are kept.
TEST(AceModes, AddressSize16UsesAndWrapsLowHalves_Sec3_1) {
  Rig r;
  r.mem.map(0x0, 0x10000);
  const Bytes pt = random_bytes(48, 7);
  // Blocks at 0xFFF0, 0x0000, 0x0010 (wrapping).
  std::memcpy(r.mem.host(0xFFF0, 16), pt.data(), 16);
  std::memcpy(r.mem.host(0x0000, 32), pt.data() + 16, 32);
  r.put(0x8000, Bytes{0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  r.put(0x9000, kSp800Key);
  r.put(0xA000, kIv);
  r.s[Gpr::AX] = 0x5555A000;
  r.s[Gpr::BX] = 0x66669000;
  r.s[Gpr::DX] = 0x77778000;
  r.s[Gpr::SI] = 0x1234FFF0;
  r.s[Gpr::DI] = 0x43214000;
  r.s[Gpr::CX] = 0xABCD0003;
  const Outcome o = r.exec(isa::InsnId::XcryptCbc, 16);
  ASSERT_EQ(o.status, Status::Completed);
  EXPECT_EQ(to_hex(r.mem.host(0x4000, 48), 48), to_hex(evp("CBC", kSp800Key, kIv, pt, true)));
  EXPECT_EQ(r.s[Gpr::SI], 0x12340020u);
  EXPECT_EQ(r.s[Gpr::DI], 0x43214030u);
  EXPECT_EQ(r.s[Gpr::CX], 0xABCD0000u);
  EXPECT_EQ(r.s[Gpr::AX], 0x55554020u);  // CBC encrypt: EAX -> last ciphertext (AX only)
}

// §3.1 REP prefix, §1.7: with 67h an ECB group at SI = 0xFFF0 goes on at offset 0, not at
// linear 0x10000, which holds memory here: with page 0 unmapped its load faults at 0.
TEST(AceModes, AddressSize16InputGroupWrapsIntoAnUnmappedPage_Sec3_1) {
  Rig r;
  r.mem.map(0x8000, 0x2000);  // control word and key
  r.mem.map(0xF000, 0x1000);  // the first block, and the output
  r.put(0x8000, Bytes{0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  r.put(0x9000, kSp800Key);
  r.s[Gpr::BX] = 0x9000;
  r.s[Gpr::DX] = 0x8000;
  r.s[Gpr::SI] = 0xFFF0;
  r.s[Gpr::DI] = 0xF000;
  r.s[Gpr::CX] = 2;
  const Outcome o = r.exec(isa::InsnId::XcryptEcb, 16);
  ASSERT_EQ(o.status, Status::Faulted);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, 0u);
  EXPECT_FALSE(o.fault.write);
  EXPECT_EQ(r.s[Gpr::SI], 0xFFF0u);
  EXPECT_EQ(r.s[Gpr::CX], 2u);
}

// §3.1 with a 64-bit address size (Nano, long mode): RSI/RDI/RCX above 4 GB.
TEST(AceModes, AddressSize64UsesFullRegisters_Sec3_1) {
  Rig r("nano");
  const uint64_t base = 0x1'2000'0000ull;
  r.mem.map(base, 0x2000);
  const Bytes pt = random_bytes(64, 8);
  r.put(base, pt);
  r.set_cw(0x00A);
  r.load_regs(4, base, base + 0x1000);
  ASSERT_EQ(r.exec(isa::InsnId::XcryptEcb, 64).status, Status::Completed);
  EXPECT_EQ(to_hex(r.get(base + 0x1000, 64)), to_hex(evp("ECB", kSp800Key, {}, pt, true)));
  EXPECT_EQ(r.s[Gpr::SI], base + 64);
  EXPECT_EQ(r.s[Gpr::DI], base + 0x1040);
}

// §3.1 CTR: only bytes 14-15 count, big-endian; App. A 12: no carry into byte 13 at the
// wrap (reported).
TEST(AceModes, CtrCountsBytes14And15AndWrapsWithoutCarry_Sec3_1) {
  Rig r;
  r.set_cw(0x00A);
  Bytes ctr = hex("00112233445566778899aabbccddfffe");
  r.set_iv(ctr);
  const Bytes pt = random_bytes(16 * 5, 9);
  r.put(Layout::kIn, pt);
  ASSERT_EQ(r.run("CTR", 5).status, Status::Completed);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, pt.size())), to_hex(ace_ctr_reference(kSp800Key, ctr, pt)));
  EXPECT_EQ(to_hex(r.get(Layout::kIv, 16)), "00112233445566778899aabbccdd0003");
  EXPECT_EQ(r.diag.count(Diag::CtrCounterWrap), 1);
  // Differs from a full 128-bit counter (OpenSSL EVP CTR) once it wraps.
  EXPECT_NE(to_hex(r.get(Layout::kOut, pt.size())), to_hex(evp("CTR", kSp800Key, ctr, pt, true)));
}

// §3.2 CIPHR = 1 (undefined): computes AES as if 0; reserved bits: ignored; both reported.
TEST(AceModes, CiphrAndReservedBitsIgnoredAndReported_Sec3_2) {
  Rig r;
  Bytes cw = {0x4A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0};  // CIPHR + bit 103
  r.put(Layout::kCw, cw);
  const Bytes pt = random_bytes(32, 10);
  r.put(Layout::kIn, pt);
  ASSERT_EQ(r.run("ECB", 2).status, Status::Completed);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", kSp800Key, {}, pt, true)));
  EXPECT_EQ(r.diag.count(Diag::CiphrSet), 1);
  EXPECT_EQ(r.diag.count(Diag::ControlWordReserved), 1);
}

// §3.2 KSIZE = 3 and KEYGN = 0 with a long key are undefined: #GP at EDX, reported.
TEST(AceModes, ReservedKeySizeAndHardwareLongKeyRaiseGp_Sec3_2) {
  struct Case {
    uint32_t cw;
    Diag d;
  };
  for (const Case& c : {Case{0xC0A, Diag::KsizeReserved}, Case{0x40C, Diag::HwKeygenNot128},
                        Case{0x80E, Diag::HwKeygenNot128}}) {
    Rig r;
    r.set_cw(c.cw);
    r.load_regs(1);
    const Outcome o = r.exec(isa::InsnId::XcryptEcb);
    EXPECT_EQ(o.fault.kind, FaultKind::GeneralProtection);
    EXPECT_EQ(o.fault.address, Layout::kCw);
    EXPECT_EQ(r.diag.count(c.d), 1);
    EXPECT_FALSE(r.s.eflags30());
    EXPECT_EQ(r.s[Gpr::CX], 1u);
  }
}

// §3.2 INTER (our layout, Diag InterMode): through the instruction, ROUND = r gives the
// FIPS-197 C.1 state at the start of round r + 1, encrypting (hardware keys) and
// decrypting (Fig. 15 keys from memory).
TEST(AceModes, InterModeGivesFips197RoundStates_Sec3_2) {
  const auto vecs = read_vectors("aes/fips197_rounds.vec");
  const VectorRecord& setup = vecs.front();
  int checked = 0;
  for (const VectorRecord& v : vecs) {
    if (v.section == "setup" || v.num("Round") < 2) continue;
    const uint32_t round = uint32_t(v.num("Round")) - 1;
    Rig r;
    if (v.section == "cipher") {
      r.set_key(setup.hex("Key"));
      r.set_cw(round | cwf::kInter);
      r.put(Layout::kIn, setup.hex("In"));
    } else {
      r.set_key(client_schedule(setup.hex("Key"), true));
      r.set_cw(round | cwf::kInter | cwf::kKeygn | cwf::kDecrypt);
      r.put(Layout::kIn, setup.hex("Out"));
    }
    ASSERT_EQ(r.run("ECB", 1).status, Status::Completed);
    EXPECT_EQ(to_hex(r.get(Layout::kOut, 16)), v.str("State")) << v.section << " " << round;
    EXPECT_EQ(r.diag.count(Diag::InterMode), 1);
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

// §3.2: KEYGN = 1 always reads 16 values; with ROUND = 0 (16 rounds) the 17th round key
// is entry 0 again (our choice, reported).
TEST(AceModes, MemoryKeysWith16RoundsWrapKeyRam_Sec3_2) {
  Rig r;
  const Bytes sched = random_bytes(256, 12);
  r.set_key(sched);
  r.set_cw(0x000 | cwf::kKeygn);  // ROUND = 0 -> 16 rounds
  const Bytes pt = random_bytes(16, 13);
  r.put(Layout::kIn, pt);
  ASSERT_EQ(r.run("ECB", 1).status, Status::Completed);
  ace::RoundKeys rk;
  rk.rounds = 16;
  for (int i = 0; i <= 16; ++i) std::memcpy(rk.k[i], sched.data() + 16 * (i % 16), 16);
  uint8_t want[16];
  ace::portable_kernels().ecb_enc(rk, pt.data(), want, 1);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 16)), to_hex(want, 16));
  EXPECT_EQ(r.diag.count(Diag::AceKeyRam16Rounds), 1);
}

// §3.1: in-place operation (ESI == EDI) works in every mode; output ahead of input
// (overlapping) follows the hardware's load-then-store order.
TEST(AceModes, InPlaceAndOverlappingBuffers_Sec3_1) {
  for (const char* mode : {"ECB", "CBC", "CFB", "OFB", "CTR"}) {
    for (bool decrypt : {false, true}) {
      Rig r;
      const std::string m = mode;
      const bool crypt = decrypt && (m == "ECB" || m == "CBC" || m == "CFB");
      r.set_cw(0x00A | (crypt ? cwf::kDecrypt : 0));
      const Bytes in = random_bytes(16 * 20, 14);
      r.put(Layout::kIn, in);
      r.load_regs(20, Layout::kIn, Layout::kIn);
      ASSERT_EQ(r.exec(xcrypt_id(mode)).status, Status::Completed);
      const Bytes want =
          m == "CTR" ? ace_ctr_reference(kSp800Key, kIv, in) : evp(m, kSp800Key, kIv, in, !crypt);
      EXPECT_EQ(to_hex(r.get(Layout::kIn, in.size())), to_hex(want)) << mode << decrypt;
    }
  }
  // ECB with the output one block above the input: each pair is loaded before it is
  // stored, so block 2k+1's input is intact and block 2k+2 reads block 2k+1's output.
  Rig r;
  r.set_cw(0x00A);
  const Bytes in = random_bytes(16 * 6, 15);
  r.put(Layout::kIn, in);
  r.load_regs(5, Layout::kIn, Layout::kIn + 16);
  ASSERT_EQ(r.exec(isa::InsnId::XcryptEcb).status, Status::Completed);
  Bytes model = in;
  for (int pair = 0; pair < 3; ++pair) {
    const int n = std::min(2, 5 - 2 * pair);
    Bytes load(model.begin() + 32 * pair, model.begin() + 32 * pair + 32);
    const Bytes enc = evp("ECB", kSp800Key, {}, load, true);
    std::copy(enc.begin(), enc.begin() + 16 * n, model.begin() + 32 * pair + 16);
  }
  EXPECT_EQ(to_hex(r.get(Layout::kIn, 96)), to_hex(model));
}

// §0 note, §7.1, §7.2: CTR is ACE2-only; Padlock raises #UD on Nehemiah and reports it.
// §1.3: no ACE at all (Nehemiah C5XL) is #UD for every REP XCRYPT.
TEST(AceModes, CtrOnNehemiahAndNoAceAreUd_Sec0_Sec1_3) {
  AceRig r("nehemiah-c5p", /*via_padlock=*/true);
  r.set_cw(0x00A);
  Outcome o = r.run("CTR", 1);
  EXPECT_EQ(o.fault.kind, FaultKind::InvalidOpcode);
  EXPECT_EQ(r.diag.count(Diag::CtrOnNehemiah), 1);
  EXPECT_EQ(r.run("CBC", 1).status, Status::Completed);
  AceRig x("nehemiah-c5xl", /*via_padlock=*/true);
  x.set_cw(0x00A);
  EXPECT_EQ(x.run("ECB", 2).fault.kind, FaultKind::InvalidOpcode);
}

}  // namespace
}  // namespace padlock::test
