// Exceptions (§1.7, §3.1, §3.2): #GP for misaligned pointers, #PF at the first faulting
// byte with the registers showing only completed stores, and exact resumption.

#include "ace_rig.hpp"

namespace padlock::test {
namespace {

const Bytes kKey = hex("000102030405060708090a0b0c0d0e0f");
const Bytes kIv = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfe00");

// §3.1 EBX, EAX; §3.2 EDX: the key, IV and control-word pointers must be 16-byte aligned.
TEST(AceFaults, MisalignedKeyIvControlWordRaiseGp_Sec3_1_Sec3_2) {
  for (Gpr reg : {Gpr::BX, Gpr::AX, Gpr::DX}) {
    AceRig r;
    r.set_cw(0x00A);
    r.load_regs(2);
    r.s[reg] += 4;
    r.s.set_eflags30(false);
    const ArchState before = r.s;
    const Outcome o = r.exec(isa::InsnId::XcryptCbc);
    EXPECT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::GeneralProtection);
    EXPECT_EQ(o.fault.address, before[reg]);
    EXPECT_EQ(0, std::memcmp(r.s.gpr, before.gpr, sizeof before.gpr));
  }
  // ECB ignores EAX entirely.
  AceRig r;
  r.set_cw(0x00A);
  r.load_regs(2);
  r.s[Gpr::AX] = 3;
  EXPECT_EQ(r.exec(isa::InsnId::XcryptEcb).status, Status::Completed);
}

// §1.7: a page fault on the control word, key, or IV happens before anything changes.
TEST(AceFaults, PageFaultOnOperandsChangesNothing_Sec1_7) {
  struct Case {
    Gpr reg;
    uint64_t at;
    bool write;
    const char* mode;
    uint32_t cw;
  };
  // Key schedule (KEYGN = 1) whose last 16 of 256 bytes are on an unmapped page: §3.2,
  // the hardware reads all sixteen values, so this faults even for AES-128.
  const Case cases[] = {
      {Gpr::DX, 0x90000, false, "CBC", 0x00A},
      {Gpr::BX, 0x90000, false, "CBC", 0x00A},
      {Gpr::BX, 0x90000 - 240, false, "ECB", 0x08A},
      {Gpr::AX, 0x90000, false, "CBC", 0x00A},
  };
  for (const Case& c : cases) {
    AceRig r;
    r.mem.map(0x80000, 0x11000);
    r.mem.protect(0x90000, 0x1000, FlatMemory::kNone);
    r.set_cw(c.cw);
    r.set_key(random_bytes(256, 1));
    r.load_regs(4);
    r.s[c.reg] = c.at;
    if (c.reg == Gpr::DX) {
      r.set_cw(c.cw);
    } else if (c.reg == Gpr::BX && c.at != 0x90000) {
      std::memcpy(r.mem.host(c.at, 240), random_bytes(240, 2).data(), 240);
    }
    r.put(Layout::kOut, Bytes(64, 0x5A));
    const ArchState before = r.s;
    const Outcome o = r.exec(xcrypt_id(c.mode));
    EXPECT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
    EXPECT_EQ(o.fault.address, 0x90000u);
    EXPECT_EQ(o.fault.write, c.write);
    EXPECT_EQ(0, std::memcmp(r.s.gpr, before.gpr, sizeof before.gpr));
    EXPECT_EQ(to_hex(r.get(Layout::kOut, 64)), to_hex(Bytes(64, 0x5A)));
  }
}

// §3.1: modes that write the IV memory (OFB, CTR, CBC/CFB decryption) fault on a
// read-only IV before doing anything; CBC/CFB encryption does not write it.
TEST(AceFaults, ReadOnlyIvFaultsOnlyWhereWritten_Sec3_1) {
  struct Case {
    const char* mode;
    uint32_t cw;
    bool faults;
  };
  for (const Case& c :
       {Case{"OFB", 0x00A, true}, Case{"CTR", 0x00A, true}, Case{"CBC", 0x20A, true},
        Case{"CFB", 0x20A, true}, Case{"CBC", 0x00A, false}, Case{"CFB", 0x00A, false}}) {
    AceRig r;
    r.set_key(kKey);
    r.set_cw(c.cw);
    r.mem.protect(Layout::kIv, 16, FlatMemory::kRead);
    const Outcome o = r.run(c.mode, 2);
    if (c.faults) {
      EXPECT_EQ(o.fault.kind, FaultKind::PageFault) << c.mode;
      EXPECT_EQ(o.fault.address, Layout::kIv);
      EXPECT_TRUE(o.fault.write);
      EXPECT_EQ(r.s[Gpr::CX], 2u);
    } else {
      EXPECT_EQ(o.status, Status::Completed) << c.mode;
    }
  }
}

// §1.7: a fault in the middle of the data leaves ECX/ESI/EDI (and the IV, §3.1) at the
// last completed store; after the handler maps the page, re-executing the same
// instruction finishes the job exactly.
TEST(AceFaults, MidStreamFaultThenResumeIsExact_Sec1_7_Sec3_1) {
  struct Case {
    const char* mode;
    bool decrypt;
    bool output_side;
  };
  const Case cases[] = {
      {"ECB", false, false}, {"ECB", true, true},  {"CBC", false, false}, {"CBC", true, true},
      {"CFB", false, true},  {"CFB", true, false}, {"OFB", false, false}, {"CTR", false, true},
  };
  for (const Case& c : cases) {
    const std::string m = c.mode;
    SCOPED_TRACE(m + (c.decrypt ? " decrypt" : " encrypt") +
                 (c.output_side ? " output" : " input"));
    AceRig r("esther-c5j-s9");
    const uint64_t in = 0x400000, out = 0x500000;
    r.mem.map(in, 0x2000);
    r.mem.map(out, 0x2000);
    const uint64_t n = 12;
    const uint64_t start = 0x1000 - 16 * 5;  // block 5 is the first on the second page
    const Bytes text = random_bytes(16 * n, 3);
    r.put(in + start, text);
    (c.output_side ? r.mem.protect(out + 0x1000, 0x1000, FlatMemory::kRead)
                   : r.mem.protect(in + 0x1000, 0x1000, FlatMemory::kNone));
    const bool crypt = c.decrypt && m != "OFB" && m != "CTR";
    r.set_key(kKey);
    r.set_iv(kIv);
    r.set_cw(0x00A | (crypt ? cwf::kDecrypt : 0));
    r.load_regs(n, in + start, out + start);
    Outcome o = r.exec(xcrypt_id(m));
    ASSERT_EQ(o.status, Status::Faulted);
    EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
    EXPECT_EQ(o.fault.address, (c.output_side ? out : in) + 0x1000);
    EXPECT_EQ(o.fault.write, c.output_side);
    // ECB loads pairs: an input fault in block 5 stops before the pair (4, 5).
    const uint64_t done = (m == "ECB" && !c.output_side) ? 4 : 5;
    EXPECT_EQ(o.blocks, done);
    EXPECT_EQ(r.s[Gpr::CX], n - done);
    EXPECT_EQ(r.s[Gpr::SI], in + start + 16 * done);
    EXPECT_EQ(r.s[Gpr::DI], out + start + 16 * done);
    EXPECT_FALSE(r.s.eflags30()) << "the exception clears EFLAGS[30] (§1.8)";
    // Handler: make the page accessible, return, re-execute.
    r.mem.protect(in + 0x1000, 0x1000, FlatMemory::kRW);
    r.mem.protect(out + 0x1000, 0x1000, FlatMemory::kRW);
    o = r.exec(xcrypt_id(m));
    ASSERT_EQ(o.status, Status::Completed);
    EXPECT_EQ(o.blocks, n - done);
    const Bytes want =
        m == "CTR" ? ace_ctr_reference(kKey, kIv, text) : evp(m, kKey, kIv, text, !crypt);
    EXPECT_EQ(to_hex(r.get(out + start, text.size())), to_hex(want));
  }
}

// §1.7 with ALIGN = 1: an unaligned output block straddling into a read-only page faults
// at the first byte of that page; the block before it is the last one stored.
TEST(AceFaults, UnalignedStoreFaultsAtFirstFaultingByte_Sec1_7_Sec3_2) {
  AceRig r;
  const uint64_t out = 0x500000;
  r.mem.map(out, 0x2000);
  r.mem.protect(out + 0x1000, 0x1000, FlatMemory::kRead);
  r.set_key(kKey);
  r.set_iv(kIv);
  r.set_cw(0x02A);
  const uint64_t dst = out + 0x1000 - 16 * 3 - 5;  // block 3 spans the boundary
  r.put(Layout::kIn, random_bytes(80, 4));
  r.load_regs(5, Layout::kIn, dst);
  const Outcome o = r.exec(isa::InsnId::XcryptOfb);
  EXPECT_EQ(o.fault.kind, FaultKind::PageFault);
  EXPECT_EQ(o.fault.address, out + 0x1000);
  EXPECT_TRUE(o.fault.write);
  EXPECT_EQ(r.s[Gpr::CX], 2u);
  EXPECT_EQ(r.s[Gpr::DI], dst + 48);
}

}  // namespace
}  // namespace padlock::test
