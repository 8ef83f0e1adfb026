// models/padlock.cpp: enable rules (§1.2, §1.3, §1.5), MSR access (§1.3), CPUID following the
// MSRs, and dispatch of decoded instructions with their prefix diagnostics.
#include "models/padlock.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "isa/decoder.hpp"
#include "isa/msr.hpp"
#include "models/flat_memory.hpp"

namespace padlock {
namespace {

class Recorder : public DiagnosticSink {
 public:
  void report(Diag d, uint64_t) override { seen.push_back(d); }
  bool saw(Diag d) const { return std::find(seen.begin(), seen.end(), d) != seen.end(); }
  std::vector<Diag> seen;
};

isa::Decoded dec(std::vector<uint8_t> b, isa::CpuMode mode = isa::CpuMode::Protected32) {
  return isa::decode(b.data(), b.size(), mode);
}

const isa::Decoded kXstore = dec({0x0F, 0xA7, 0xC0});
const isa::Decoded kRepXstore = dec({0xF3, 0x0F, 0xA7, 0xC0});
const isa::Decoded kEcb = dec({0xF3, 0x0F, 0xA7, 0xC8});
const isa::Decoded kCtr = dec({0xF3, 0x0F, 0xA7, 0xD8});
const isa::Decoded kSha1 = dec({0xF3, 0x0F, 0xA6, 0xC8});
const isa::Decoded kSha256 = dec({0xF3, 0x0F, 0xA6, 0xD0});
const isa::Decoded kMontmul = dec({0xF3, 0x0F, 0xA6, 0xC0});

struct Machine {
  explicit Machine(const char* name) : p(*find_cpu_model(name)) {
    mem.map(0x10000, 0x10000);
    env.diag = &diag;
    env.mhz = p.model().default_mhz;
    s[Gpr::DI] = 0x10000;
  }
  Outcome run(const isa::Decoded& d) {
    const Outcome o = p.execute(d, s, mem, env);
    env.now += o.cycles;
    return o;
  }
  bool ud(const isa::Decoded& d) {
    const Outcome o = run(d);
    return o.status == Status::Faulted && o.fault.kind == FaultKind::InvalidOpcode;
  }
  uint32_t edx() const { return p.cpuid(0xC0000001, 0).edx; }

  Padlock p;
  FlatMemory mem;
  ArchState s;
  ExecEnv env;
  Recorder diag;
};

// §1.3 EDX[3] "Reflects the result of setting bit 6 of MSR 0x110B"; §2.2 ENBL = 0 makes
// XSTORE invalid; EDX[2] (present) does not change.
TEST(Padlock, RngEnableFollowsMsr_S1_3_S2_2) {
  for (const CpuModel* m : all_cpu_models()) {
    if (m->enables != EnableScheme::Via) continue;  // zhaoxin_models_test.cpp, EnableMsrs
    SCOPED_TRACE(m->name);
    Machine mc(m->name);
    ASSERT_TRUE(mc.p.unit_enabled(isa::Unit::Rng));
    ASSERT_TRUE(mc.p.wrmsr(isa::kMsrRng, 0x00000000, mc.env));
    EXPECT_EQ(mc.edx() & 0xC, 0x4u) << "present, disabled";
    EXPECT_FALSE(mc.p.unit_enabled(isa::Unit::Rng));
    EXPECT_TRUE(mc.ud(kXstore));
    EXPECT_TRUE(mc.ud(kRepXstore));
    ASSERT_TRUE(mc.p.wrmsr(isa::kMsrRng, 0x40, mc.env));
    EXPECT_EQ(mc.edx() & 0xC, 0xCu);
    mc.env.now += 10'000'000;  // let the buffers fill
    const Outcome o = mc.run(kXstore);
    EXPECT_EQ(o.status, Status::Completed);
    EXPECT_EQ(o.bytes, 8u);
  }
}

// §1.5 FCR[28] = 0 disables ACE/ACE2/PHE/PMM (not RNG); §1.3 EDX[7], [9], [11], [13] follow it.
TEST(Padlock, FcrBit28DisablesAcePhePmm_S1_3_S1_5) {
  for (const char* name : {"nehemiah-c5p", "esther-c5j", "esther-c5j-s9", "nano"}) {
    SCOPED_TRACE(name);
    Machine mc(name);
    const uint32_t on = mc.edx();
    uint64_t fcr = 0;
    ASSERT_TRUE(mc.p.rdmsr(isa::kMsrFcr, fcr, mc.env));
    ASSERT_TRUE(mc.p.wrmsr(isa::kMsrFcr, fcr & ~uint64_t(isa::kFcrPadlockEnable), mc.env));
    const uint32_t off = mc.edx();
    EXPECT_EQ(off, on & ~uint32_t(kAceEnabled | kAce2Enabled | kPheEnabled | kPmmEnabled));
    EXPECT_EQ(off & 0x1544, on & 0x1544) << "presence bits unchanged";
    EXPECT_NE(off & kRngEnabled, 0u) << "RNG is not controlled by the FCR";
    for (isa::Unit u : {isa::Unit::Ace, isa::Unit::Phe, isa::Unit::Pmm}) {
      EXPECT_FALSE(mc.p.unit_enabled(u));
    }
    EXPECT_TRUE(mc.ud(kEcb));
    EXPECT_TRUE(mc.ud(kSha1));
    EXPECT_TRUE(mc.ud(kSha256));
    EXPECT_TRUE(mc.ud(kMontmul));
    mc.env.now += 10'000'000;
    EXPECT_EQ(mc.run(kXstore).status, Status::Completed) << "RNG still works";
    // Setting the bit again re-enables the units that exist.
    ASSERT_TRUE(mc.p.wrmsr(isa::kMsrFcr, fcr, mc.env));
    EXPECT_EQ(mc.edx(), on);
    EXPECT_TRUE(mc.p.unit_enabled(isa::Unit::Ace));
    const Units& u = mc.p.model().units;
    EXPECT_EQ(mc.p.unit_enabled(isa::Unit::Phe), u.phe);
    EXPECT_EQ(mc.p.unit_enabled(isa::Unit::Pmm), u.pmm);
    // §1.5: the other FCR bits are not PadLock's and read back as written.
    ASSERT_TRUE(mc.p.wrmsr(isa::kMsrFcr, fcr | 0x81, mc.env));
    uint64_t back = 0;
    mc.p.rdmsr(isa::kMsrFcr, back, mc.env);
    EXPECT_EQ(back, fcr | 0x81);
  }
}

// §1.2: "If CR4[9] is not set, PadLock behaves as if it were disabled via the MSR"; CPUID
// still shows the MSR state.
TEST(Padlock, Cr4OsfxsrClearMeansUd_S1_2) {
  for (const CpuModel* m : all_cpu_models()) {
    Machine mc(m->name);
    mc.env.now += 10'000'000;
    mc.s.cr4_osfxsr = false;
    for (const isa::Decoded* d :
         {&kXstore, &kRepXstore, &kEcb, &kCtr, &kSha1, &kSha256, &kMontmul}) {
      EXPECT_TRUE(mc.ud(*d)) << m->name << " " << d->info().guide_name;
    }
    EXPECT_EQ(mc.edx(), mc.p.centaur_features());
    EXPECT_NE(mc.edx() & kRngEnabled, 0u);
    mc.s.cr4_osfxsr = true;
    EXPECT_EQ(mc.run(kXstore).status, Status::Completed) << m->name;
  }
}

// CR0.TS set (ring 0 only): every PadLock instruction raises #NM, after the #UD checks, as
// an SSE instruction does (PadLock runs in the SSE datapath, §1.2 note).
TEST(Padlock, Cr0TsSetMeansNm) {
  for (const CpuModel* m : all_cpu_models()) {
    Machine mc(m->name);
    mc.env.now += 10'000'000;
    mc.s.cr0_ts = true;
    const Outcome o = mc.run(kXstore);
    EXPECT_EQ(o.status, Status::Faulted) << m->name;
    EXPECT_EQ(o.fault.kind, FaultKind::DeviceNotAvailable) << m->name;
    mc.s.cr4_osfxsr = false;  // #UD comes first
    EXPECT_TRUE(mc.ud(kXstore)) << m->name;
    mc.s.cr4_osfxsr = true;
    mc.s.cr0_ts = false;
    EXPECT_EQ(mc.run(kXstore).status, Status::Completed) << m->name;
  }
}

// §1.3: absent units raise #UD whatever the enables (C5XL: RNG only; C5P: no PHE/PMM).
TEST(Padlock, AbsentUnitsUd_S1_3) {
  Machine c5xl("nehemiah-c5xl");
  for (const isa::Decoded* d : {&kEcb, &kCtr, &kSha1, &kSha256, &kMontmul}) {
    EXPECT_TRUE(c5xl.ud(*d)) << d->info().guide_name;
  }
  Machine c5p("nehemiah-c5p");
  for (const isa::Decoded* d : {&kSha1, &kSha256, &kMontmul}) {
    EXPECT_TRUE(c5p.ud(*d)) << d->info().guide_name;
  }
}

// §0 note, §7.1: CTR is an ACE2 mode: #UD on Nehemiah's ACE, reported.
TEST(Padlock, CtrOnNehemiahUd_S0_S7_1) {
  Machine mc("nehemiah-c5p");
  EXPECT_TRUE(mc.ud(kCtr));
  EXPECT_TRUE(mc.diag.saw(Diag::CtrOnNehemiah));
}

// §1.3: RDMSR/WRMSR of 0x1107 raise #GP where there is no FCR (C5XL, §1.5); 0x110B exists
// on every model (all have RNG); other MSR numbers are not ours.
TEST(Padlock, MsrAccessGp_S1_3_S1_5) {
  for (const CpuModel* m : all_cpu_models()) {
    Padlock p(*m);
    ExecEnv env;
    uint64_t v = 0;
    EXPECT_TRUE(p.rdmsr(isa::kMsrRng, v, env)) << m->name;
    EXPECT_TRUE(p.wrmsr(isa::kMsrRng, 0x40, env)) << m->name;
    EXPECT_EQ(p.rdmsr(isa::kMsrFcr, v, env), m->has_fcr) << m->name;
    EXPECT_EQ(p.wrmsr(isa::kMsrFcr, isa::kFcrPadlockEnable, env), m->has_fcr) << m->name;
    EXPECT_FALSE(p.rdmsr(0x10, v, env));
    EXPECT_FALSE(p.wrmsr(0x110A, 0, env));
  }
  Padlock c5xl(*find_cpu_model("nehemiah-c5xl"));
  EXPECT_EQ(c5xl.centaur_features(), 0x0Cu) << "no FCR: nothing else to enable";
}

// Decoder statuses reach the model as #UD; a missing REP is reported (§3.1, §4.1, §5.1);
// REPNE runs as REP and is reported (our choice for the undefined case, §2.1).
TEST(Padlock, PrefixOutcomes_S2_1_S3_1) {
  Machine mc("esther-c5j");
  mc.env.now += 10'000'000;
  EXPECT_TRUE(mc.ud(dec({0x0F, 0xA7, 0xC8})));  // XCRYPTECB without REP
  EXPECT_TRUE(mc.diag.saw(Diag::MissingRep));
  EXPECT_TRUE(mc.ud(dec({0x66, 0x0F, 0xA7, 0xC0})));        // 66h XSTORE
  EXPECT_TRUE(mc.ud(dec({0xF0, 0xF3, 0x0F, 0xA7, 0xC0})));  // LOCK
  mc.s[Gpr::CX] = 16;
  mc.s[Gpr::DX] = 0;
  mc.s[Gpr::DI] = 0x10000;
  const Outcome o = mc.run(dec({0xF2, 0x0F, 0xA7, 0xC0}));
  EXPECT_EQ(o.status, Status::Completed);
  EXPECT_EQ(o.bytes, 16u) << "REPNE XSTORE ran as REP XSTORE";
  EXPECT_EQ(mc.s[Gpr::CX], 0u);
  EXPECT_TRUE(mc.diag.saw(Diag::RepnePrefix));
}

// The seed reaches the RNG: two machines with one seed store the same bytes (§2.2 model).
TEST(Padlock, SeedReachesRng) {
  auto bytes = [](uint64_t seed) {
    Padlock p(*find_cpu_model("esther-c5j"), PadlockConfig{.seed = seed});
    FlatMemory mem;
    mem.map(0x10000, 0x1000);
    ArchState s;
    s[Gpr::CX] = 64;
    s[Gpr::DI] = 0x10000;
    ExecEnv env;
    p.execute(kRepXstore, s, mem, env);
    const uint8_t* h = mem.host(0x10000, 64);
    return std::vector<uint8_t>(h, h + 64);
  };
  EXPECT_EQ(bytes(5), bytes(5));
  EXPECT_NE(bytes(5), bytes(6));
}

}  // namespace
}  // namespace padlock
