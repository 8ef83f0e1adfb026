// The Esther stepping-8 REP XCRYPTCTR erratum (§3.1 ERRATA, §6.6 CTR_ERRATA.C). Model:
// interrupt points every 2 blocks while >= 3 remain; the counter write-back at completion
// and at an interrupt point gets one extra increment when the blocks processed by this
// execution are even. Each statement of §6.6 is checked (a)-(d).
#include <algorithm>
#include <random>

#include "ace_rig.hpp"

namespace padlock::test {
namespace {

uint16_t counter_of(AceRig& r) {
  const Bytes iv = r.get(Layout::kIv, 16);
  return uint16_t(iv[14] * 256 + iv[15]);  // §6.6: IV[14] * 256 + IV[15]
}

// §6.6 phase 3: expected = initial + count + (1 if count is even), 16-bit.
uint16_t expected_counter(uint64_t count) {
  return uint16_t(0xFEFF + count + (count % 2 == 0 ? 1 : 0));
}

struct ErrataRig : AceRig {
  ErrataRig() : AceRig("esther-c5j") {
    EXPECT_TRUE(unit().ctr_errata());
    set_key(kSp800Key);
    set_cw(0x00A);  // §6.6: 128-bit key, hardware key generation, encrypt
  }
  // One REP XCRYPTCTR of n blocks from a reset IV, resumed after every interrupt as the
  // OS would. Interrupts pend at the given cycles (relative to the first start).
  int encrypt(uint64_t n, const std::vector<uint64_t>& interrupts) {
    set_iv(kSp800Ctr);
    load_regs(n);
    env.now = 0;
    int taken = 0;
    size_t next = 0;  // interrupts[next] is the next one to become pending
    for (;;) {
      env.interrupt_at = next < interrupts.size() ? interrupts[next] : ~0ull;
      const Outcome o = exec(isa::InsnId::XcryptCtr);
      env.now += o.cycles;
      if (o.status != Status::Interrupted) {
        EXPECT_EQ(o.status, Status::Completed);
        return taken;
      }
      ++taken;
      while (next < interrupts.size() && interrupts[next] <= env.now) ++next;
    }
  }
};

// (a) Without interrupts the counter ends one higher than the block count when ECX is
// even, and the ciphertext is right either way.
TEST(AceCtrErrata, A_EvenCountExtraIncrementCiphertextRight_Sec6_6) {
  for (uint64_t n = 1; n <= 40; ++n) {
    ErrataRig r;
    const Bytes pt = random_bytes(16 * n, uint32_t(n));
    r.put(Layout::kIn, pt);
    EXPECT_EQ(r.encrypt(n, {}), 0);
    EXPECT_EQ(counter_of(r), uint16_t(0xFEFF + n + (n % 2 == 0 ? 1 : 0))) << n;
    EXPECT_EQ(to_hex(r.get(Layout::kOut, pt.size())),
              to_hex(ace_ctr_reference(kSp800Key, kSp800Ctr, pt)))
        << n;
  }
}

// (b) An interrupt taken inside the instruction leaves a counter that makes the rest of
// the ciphertext wrong, even for odd ECX; blocks before the interrupt stay right.
TEST(AceCtrErrata, B_InterruptCorruptsRestEvenForOddCount_Sec6_6) {
  for (uint64_t n : {5u, 7u, 8u, 9u, 33u}) {
    ErrataRig r;
    const Bytes pt = random_bytes(16 * n, 100 + uint32_t(n));
    r.put(Layout::kIn, pt);
    ASSERT_EQ(r.encrypt(n, {0}), 1) << n;  // pending at once: taken after 2 blocks
    const Bytes want = ace_ctr_reference(kSp800Key, kSp800Ctr, pt);
    const Bytes got = r.get(Layout::kOut, pt.size());
    EXPECT_EQ(to_hex(Bytes(got.begin(), got.begin() + 32)),
              to_hex(Bytes(want.begin(), want.begin() + 32)));
    for (uint64_t b = 2; b < n; ++b) {
      EXPECT_NE(to_hex(Bytes(got.begin() + 16 * b, got.begin() + 16 * b + 16)),
                to_hex(Bytes(want.begin() + 16 * b, want.begin() + 16 * b + 16)))
          << "block " << b << " of " << n;
    }
    EXPECT_NE(counter_of(r), expected_counter(n)) << n;
  }
}

// (c) For 1 < ECX < 5 no interrupt is taken, so the ciphertext is always right.
TEST(AceCtrErrata, C_SmallCountsAlwaysRight_Sec6_6) {
  for (uint64_t n = 2; n <= 4; ++n) {
    ErrataRig r;
    const Bytes pt = random_bytes(16 * n, 200 + uint32_t(n));
    r.put(Layout::kIn, pt);
    EXPECT_EQ(r.encrypt(n, {0}), 0) << n;  // an interrupt is pending the whole time
    EXPECT_EQ(to_hex(r.get(Layout::kOut, pt.size())),
              to_hex(ace_ctr_reference(kSp800Key, kSp800Ctr, pt)));
    EXPECT_EQ(counter_of(r), expected_counter(n));
  }
}

// (d) CTR_ERRATA.C phases 3 and 4: every ciphertext error coincides with a counter
// mismatch (the tallies match one for one), and check-and-retry always ends right.
TEST(AceCtrErrata, D_WorkaroundDetectsEveryErrorAndRetryEndsRight_Sec6_6) {
  std::mt19937 rng(42);
  int counter_errors = 0, text_errors = 0, trials = 0;
  for (int t = 0; t < 300; ++t) {
    const uint64_t n = 1 + rng() % 96;
    ErrataRig r;
    const Bytes pt = random_bytes(16 * n, 1000 + t);
    r.put(Layout::kIn, pt);
    const Bytes want = ace_ctr_reference(kSp800Key, kSp800Ctr, pt);
    // Interrupts at random times; about half the runs see none within the instruction.
    std::vector<uint64_t> irq;
    for (int i = 0, k = int(rng() % 4); i < k; ++i) irq.push_back(rng() % (60 * n + 100));
    std::sort(irq.begin(), irq.end());
    r.encrypt(n, irq);
    const bool counter_bad = counter_of(r) != expected_counter(n);
    const bool text_bad = r.get(Layout::kOut, pt.size()) != want;
    EXPECT_EQ(counter_bad, text_bad) << "n " << n;
    counter_errors += counter_bad;
    text_errors += text_bad;
    ++trials;
    // Phase 4: reset the IV and re-execute while the counter disagrees.
    int tries = 0;
    while (counter_of(r) != expected_counter(n) && tries < 50) {
      std::vector<uint64_t> again;
      if (rng() % 2) again.push_back(rng() % (60 * n + 100));
      r.encrypt(n, again);
      ++tries;
    }
    EXPECT_EQ(r.get(Layout::kOut, pt.size()), want) << "n " << n;
  }
  EXPECT_EQ(counter_errors, text_errors);
  EXPECT_GT(text_errors, 20) << "the trials must actually exercise the erratum";
  EXPECT_LT(text_errors, trials);
}

// §6.6 phase 1: ECX = 1 one block at a time (ESI, EDI advance; the counter steps by one)
// is unaffected by the erratum.
TEST(AceCtrErrata, SingleBlockLoopUnaffected_Sec6_6) {
  ErrataRig r;
  const uint64_t n = 16;
  const Bytes pt = random_bytes(16 * n, 7);
  r.put(Layout::kIn, pt);
  r.set_iv(kSp800Ctr);
  r.load_regs(1);
  for (uint64_t i = 0; i < n; ++i) {
    r.s[Gpr::CX] = 1;
    ASSERT_EQ(r.exec(isa::InsnId::XcryptCtr).status, Status::Completed);
  }
  EXPECT_EQ(to_hex(r.get(Layout::kOut, pt.size())),
            to_hex(ace_ctr_reference(kSp800Key, kSp800Ctr, pt)));
  EXPECT_EQ(counter_of(r), uint16_t(0xFEFF + n));
}

// Later steppings (and AceUnit::set_ctr_errata(false)) count exactly: no extra increment.
TEST(AceCtrErrata, OtherSteppingsCountExactly_Sec3_1) {
  AceRig r("esther-c5j-s9");
  EXPECT_FALSE(r.unit().ctr_errata());
  r.set_key(kSp800Key);
  r.set_cw(0x00A);
  r.set_iv(kSp800Ctr);
  r.run("CTR", 8);
  EXPECT_EQ(counter_of(r), uint16_t(0xFEFF + 8));
  ErrataRig e;
  e.unit().set_ctr_errata(false);
  e.encrypt(8, {});
  EXPECT_EQ(counter_of(e), uint16_t(0xFEFF + 8));
}

}  // namespace
}  // namespace padlock::test
