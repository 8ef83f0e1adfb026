// The EFLAGS[30] key cache (§1.8, §3.2): 0 loads the control word and key and sets the
// bit; 1 uses what the hardware holds, even if memory changed (the stale-key behaviour).
#include "ace_rig.hpp"

namespace padlock::test {
namespace {

const Bytes kKeyA = hex("2b7e151628aed2a6abf7158809cf4f3c");
const Bytes kKeyB = hex("000102030405060708090a0b0c0d0e0f");
const Bytes kText = hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51");

// §1.8 steps 1-2: the first REP XCRYPT loads and sets EFLAGS[30]; the next one does not
// load (Outcome.key_reloaded) and leaves the bit set.
TEST(AceKeyCache, FirstLoadsThenCached_Sec1_8) {
  AceRig r;
  r.set_key(kKeyA);
  r.set_cw(0x00A);
  r.put(Layout::kIn, kText);
  Outcome o = r.run("ECB", 2);
  EXPECT_TRUE(o.key_reloaded);
  EXPECT_TRUE(r.s.eflags30());
  o = r.run("ECB", 2);
  EXPECT_FALSE(o.key_reloaded);
  EXPECT_TRUE(r.s.eflags30());
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", kKeyA, {}, kText, true)));
}

// §1.8, §3.2: with EFLAGS[30] = 1 a changed key in memory is not seen (stale key) until
// pushf/popf clears the bit.
TEST(AceKeyCache, StaleKeyUntilPushfPopf_Sec1_8_Sec3_2) {
  AceRig r;
  r.set_key(kKeyA);
  r.set_cw(0x00A);
  r.put(Layout::kIn, kText);
  r.run("ECB", 2);
  r.set_key(kKeyB);
  Outcome o = r.run("ECB", 2);
  EXPECT_FALSE(o.key_reloaded);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", kKeyA, {}, kText, true)));
  r.pushf_popf();
  o = r.run("ECB", 2);
  EXPECT_TRUE(o.key_reloaded);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", kKeyB, {}, kText, true)));
}

// §1.8: the control word is cached too: flipping CRYPT in memory without a reload keeps
// encrypting; and with the bit set neither the control word nor the key is even read.
TEST(AceKeyCache, StaleControlWordAndNoOperandReads_Sec1_8) {
  AceRig r;
  r.set_key(kKeyA);
  r.set_cw(0x00A);
  r.put(Layout::kIn, kText);
  r.run("ECB", 2);
  r.set_cw(0x20A);  // decrypt, but not reloaded
  r.run("ECB", 2);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", kKeyA, {}, kText, true)));
  r.mem.protect(Layout::kCw, 0x2000, FlatMemory::kNone);  // control word and key pages
  const Outcome o = r.run("ECB", 2);
  EXPECT_EQ(o.status, Status::Completed);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", kKeyA, {}, kText, true)));
}

// §1.8, §3.2: every load expands what memory holds now, under the control word loaded
// with it; the emulator skips re-expanding an identical key (a host shortcut), which must
// never serve a stale schedule: the same key again, another key, the first key back, and
// another round count for the same key bytes.
TEST(AceKeyCache, EveryReloadExpandsWhatMemoryHolds_Sec1_8_Sec3_2) {
  AceRig r;
  r.set_cw(0x00A);
  r.put(Layout::kIn, kText);
  for (const Bytes* key : {&kKeyA, &kKeyA, &kKeyB, &kKeyA, &kKeyB}) {
    r.set_key(*key);
    r.pushf_popf();
    const Outcome o = r.run("ECB", 2);
    EXPECT_TRUE(o.key_reloaded);
    EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", *key, {}, kText, true)));
  }
  r.set_key(kKeyA);
  r.set_cw(0x00C);  // 12 rounds from the hardware expansion of the 128-bit key
  r.pushf_popf();
  r.run("ECB", 2);
  const Bytes twelve = r.get(Layout::kOut, 32);
  EXPECT_NE(to_hex(twelve), to_hex(evp("ECB", kKeyA, {}, kText, true)));
  r.set_cw(0x00A);
  r.pushf_popf();
  r.run("ECB", 2);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", kKeyA, {}, kText, true)));
  r.set_cw(0x00C);
  r.pushf_popf();
  r.run("ECB", 2);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(twelve));
}

// §1.8: the cached schedule follows the loaded control word's direction and size; a
// reload with the decrypt control word and the Fig. 15 schedule decrypts (256-bit keys).
TEST(AceKeyCache, ReloadSwitchesDirectionAndKeySize_Sec1_8_Sec3_2) {
  AceRig r;
  const Bytes key = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
  r.set_key(client_schedule(key, false));
  r.set_cw(cwf::natural(256, false));
  r.put(Layout::kIn, kText);
  r.run("ECB", 2);
  const Bytes ct = r.get(Layout::kOut, 32);
  EXPECT_EQ(to_hex(ct), to_hex(evp("ECB", key, {}, kText, true)));
  r.set_key(client_schedule(key, true));
  r.set_cw(cwf::natural(256, true));
  r.pushf_popf();
  r.put(Layout::kIn, ct);
  r.run("ECB", 2);
  EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(kText));
}

// §1.8: an exception or interrupt stores EFLAGS, clearing bit 30, so the next REP XCRYPT
// reloads; REP XCRYPT with ECX = 0 loads nothing and leaves the bit alone.
TEST(AceKeyCache, FaultsAndInterruptsClearBit30_Sec1_8) {
  AceRig r;
  r.set_key(kKeyA);
  r.set_cw(0x00A);
  r.run("ECB", 2);
  ASSERT_TRUE(r.s.eflags30());
  r.load_regs(2, Layout::kIn + 8, Layout::kOut);  // #GP
  EXPECT_EQ(r.exec(isa::InsnId::XcryptEcb).fault.kind, FaultKind::GeneralProtection);
  EXPECT_FALSE(r.s.eflags30());

  r.run("CBC", 2);
  ASSERT_TRUE(r.s.eflags30());
  r.env.interrupt_at = 0;
  EXPECT_EQ(r.run("CBC", 4).status, Status::Interrupted);
  EXPECT_FALSE(r.s.eflags30());
  r.env.interrupt_at = ~0ull;
  EXPECT_TRUE(r.run("CBC", 1).key_reloaded);

  r.pushf_popf();
  EXPECT_FALSE(r.run("CBC", 0).key_reloaded);
  EXPECT_FALSE(r.s.eflags30());
}

// §1.8: two "tasks" with different keys interleave correctly when each reload is forced
// the way the guide describes (a task switch clears bit 30 in the saved EFLAGS).
TEST(AceKeyCache, TwoTasksWithTaskSwitches_Sec1_8) {
  AceRig r;
  r.set_cw(0x00A);
  r.put(Layout::kIn, kText);
  for (int round = 0; round < 3; ++round) {
    for (const Bytes* key : {&kKeyA, &kKeyB}) {
      r.set_key(*key);
      r.pushf_popf();  // the switch to this task
      r.run("ECB", 2);
      EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", *key, {}, kText, true)));
      r.run("ECB", 2);  // second instruction of the task: cached
      EXPECT_EQ(to_hex(r.get(Layout::kOut, 32)), to_hex(evp("ECB", *key, {}, kText, true)));
    }
  }
}

}  // namespace
}  // namespace padlock::test
