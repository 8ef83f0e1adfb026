// The PadLock checker's rules on synthetic execution records (docs/checker.md): the key
// shadow of §1.8, the overlaps of §3.1, XSTORE's spare bytes (§2.1), diagnostics as
// findings, one finding per kind and PC with a count.
#include "emulator/observe/check/checker.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "isa/decoder.hpp"
#include "models/flat_memory.hpp"

namespace padlock::emu::check {
namespace {

constexpr uint64_t kCw = 0x10000, kKey = 0x10100, kIn = 0x20000, kOut = 0x30000;

struct Rig {
  FlatMemory mem;
  Checker checker{*find_cpu_model("esther"), false, nullptr};

  Rig() {
    mem.map(0x10000, 0x1000);
    mem.map(0x20000, 0x2000);
    mem.map(0x30000, 0x1000);
    std::memset(mem.host(kCw, 16), 0, 16);
    mem.host(kCw, 1)[0] = 0x0A;  // ROUND 10, encrypt, KEYGN = 0 (§3.2)
    std::memset(mem.host(kKey, 16), 0x11, 16);
  }

  // A REP XCRYPTECB record: registers before, and what the unit reported.
  PadlockRecord xcrypt(uint64_t pc, uint64_t edx, uint64_t ebx, bool reloaded, uint64_t esi = kIn,
                       uint64_t edi = kOut, uint64_t ecx = 1) {
    static const uint8_t bytes[] = {0xF3, 0x0F, 0xA7, 0xC8};
    PadlockRecord r;
    r.pc = pc;
    r.decoded = isa::decode(bytes, sizeof bytes, isa::CpuMode::Protected32);
    r.before[Gpr::DX] = edx;
    r.before[Gpr::BX] = ebx;
    r.before[Gpr::SI] = esi;
    r.before[Gpr::DI] = edi;
    r.before[Gpr::CX] = ecx;
    r.outcome.has_cw = true;
    r.outcome.cw = isa::ControlWord::from_bytes(mem.host(kCw, 16));
    r.outcome.key_reloaded = reloaded;
    r.outcome.cw_cached = !reloaded;
    return r;
  }

  std::vector<std::string> kinds() const {
    std::vector<std::string> k;
    for (const Finding& f : checker.findings()) k.push_back(kind_info(f.kind).name);
    return k;
  }
};

// §1.8: with EFLAGS[30] = 1 the engine keeps what it loaded; the same memory is no finding.
TEST(Checker, CachedKeyWithUnchangedMemoryIsClean_Sec1_8) {
  Rig rig;
  rig.checker.on_padlock(rig.xcrypt(0x100, kCw, kKey, true), rig.mem);
  rig.checker.on_padlock(rig.xcrypt(0x104, kCw, kKey, false), rig.mem);
  EXPECT_TRUE(rig.checker.findings().empty());
}

// §1.8: another key in memory at EBX while EFLAGS[30] = 1: stale-key, an error, counted
// once per PC.
TEST(Checker, ChangedKeyWithEflags30IsStaleKey_Sec1_8) {
  Rig rig;
  rig.checker.on_padlock(rig.xcrypt(0x100, kCw, kKey, true), rig.mem);
  rig.mem.host(kKey, 1)[0] ^= 1;
  rig.checker.on_padlock(rig.xcrypt(0x104, kCw, kKey, false), rig.mem);
  rig.checker.on_padlock(rig.xcrypt(0x104, kCw, kKey, false), rig.mem);
  ASSERT_EQ(rig.kinds(), std::vector<std::string>{"stale-key"});
  EXPECT_EQ(rig.checker.findings()[0].count, 2u);
  EXPECT_EQ(rig.checker.findings()[0].pc, 0x104u);
  EXPECT_TRUE(rig.checker.has_error());
}

// §1.8: a control word elsewhere with other contents (the decrypt -> encrypt shape).
TEST(Checker, OtherControlWordIsStaleKey_Sec1_8) {
  Rig rig;
  rig.checker.on_padlock(rig.xcrypt(0x100, kCw, kKey, true), rig.mem);
  std::memcpy(rig.mem.host(kCw + 16, 16), rig.mem.host(kCw, 16), 16);
  rig.mem.host(kCw + 17, 1)[0] = 0x02;  // CRYPT: decrypt
  rig.checker.on_padlock(rig.xcrypt(0x104, kCw + 16, kKey, false), rig.mem);
  EXPECT_EQ(rig.kinds(), std::vector<std::string>{"stale-key"});
}

// Equal bytes at other addresses: only a warning.
TEST(Checker, EqualCopiesElsewhereAreStaleKeyAddress_Sec1_8) {
  Rig rig;
  rig.checker.on_padlock(rig.xcrypt(0x100, kCw, kKey, true), rig.mem);
  std::memcpy(rig.mem.host(kKey + 64, 16), rig.mem.host(kKey, 16), 16);
  rig.checker.on_padlock(rig.xcrypt(0x104, kCw, kKey + 64, false), rig.mem);
  EXPECT_EQ(rig.kinds(), std::vector<std::string>{"stale-key-address"});
  EXPECT_FALSE(rig.checker.has_error());
}

// §3.1: ESI == EDI is defined; a partial overlap is not.
TEST(Checker, PartialOverlapOnly_Sec3_1) {
  Rig rig;
  rig.checker.on_padlock(rig.xcrypt(0x100, kCw, kKey, true, kIn, kIn, 4), rig.mem);
  EXPECT_TRUE(rig.checker.findings().empty());
  rig.checker.on_padlock(rig.xcrypt(0x104, kCw, kKey, true, kIn, kIn + 16, 4), rig.mem);
  EXPECT_EQ(rig.kinds(), std::vector<std::string>{"overlap-partial"});
}

// A unit's diagnostic becomes the finding of the same name.
TEST(Checker, DiagnosticsAreFindings) {
  Rig rig;
  PadlockRecord r = rig.xcrypt(0x100, kCw, kKey, true);
  r.outcome.diags = 1u << static_cast<unsigned>(Diag::ControlWordReserved) |
                    1u << static_cast<unsigned>(Diag::CiphrSet);
  rig.checker.on_padlock(r, rig.mem);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"cw-ciphr", "cw-reserved"}));
}

// §2.1: XSTORE may store 8 bytes; fewer writable bytes at EDI is a finding.
TEST(Checker, XstoreNeedsEightWritableBytes_Sec2_1) {
  Rig rig;
  static const uint8_t bytes[] = {0x0F, 0xA7, 0xC0};
  PadlockRecord r;
  r.decoded = isa::decode(bytes, sizeof bytes, isa::CpuMode::Protected32);
  r.pc = 0x200;
  r.before[Gpr::DI] = kOut + 0x1000 - 8;
  rig.checker.on_padlock(r, rig.mem);
  EXPECT_TRUE(rig.checker.findings().empty());
  r.pc = 0x204;
  r.before[Gpr::DI] = kOut + 0x1000 - 4;
  rig.checker.on_padlock(r, rig.mem);
  EXPECT_EQ(rig.kinds(), std::vector<std::string>{"xstore-overrun"});
}

// A fault the unit does not explain: #UD is a missing or disabled unit (with CR4[9] clear,
// the detail says so), #NM is CR0.TS set (§1.2 note).
TEST(Checker, FaultsNameTheirCause_Sec1_2) {
  Rig rig;
  PadlockRecord r = rig.xcrypt(0x100, kCw, kKey, true);
  r.outcome = Outcome::fault_ud();
  r.before.cr4_osfxsr = false;
  rig.checker.on_padlock(r, rig.mem);
  r.pc = 0x104;
  r.before.cr4_osfxsr = true;
  r.before.cr0_ts = true;
  r.outcome = Outcome::faulted(FaultKind::DeviceNotAvailable);
  rig.checker.on_padlock(r, rig.mem);
  EXPECT_EQ(rig.kinds(), (std::vector<std::string>{"unit-unavailable", "fpu-not-available"}));
  EXPECT_NE(rig.checker.findings()[0].detail.find("CR4[9] (OSFXSR) clear"), std::string::npos);
  EXPECT_TRUE(rig.checker.has_error());
}

}  // namespace
}  // namespace padlock::emu::check
