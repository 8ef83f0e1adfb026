// The processor the guest sees: CPUID from the model (§1.3), PadLock instructions trapped
// to the models in 32- and 64-bit mode, everything else invalid is SIGILL, user-mode
// privilege (RDMSR and CLI fault), RDTSC, and the --stats / diagnostics output.
#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <csignal>
#include <string>

#include "guest_harness.hpp"
#include "models/cpu_model.hpp"
#include "models/padlock.hpp"

namespace padlock::emu::test {
namespace {

const char* kProgram = R"SRC(
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static void cpuid(uint32_t leaf, uint32_t* a, uint32_t* b, uint32_t* c, uint32_t* d) {
  __asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(0));
}

static volatile int sig_seen, code_seen;
static void on_sig(int sig, siginfo_t* si, void* ctx) {
  ucontext_t* uc = ctx;
  sig_seen = sig;
  code_seen = si->si_code;
#if defined(__x86_64__)
  greg_t* ip = &uc->uc_mcontext.gregs[REG_RIP];
#else
  greg_t* ip = &uc->uc_mcontext.gregs[REG_EIP];
#endif
  const unsigned char* p = (const unsigned char*)*ip;
  *ip += (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0xa7) ? 4 : 2;
}

static __attribute__((noinline)) void repne_xsha1(void) {
  static uint8_t state[128] __attribute__((aligned(16)));
  const char* s = "abc";
  uintptr_t n = 3, done = 0;
  void* st = state;
  __asm__ volatile(".byte 0xf2,0x0f,0xa6,0xc8" : "+S"(s), "+c"(n), "+a"(done), "+D"(st) :: "memory");
}

int main(int argc, char** argv) {
  const char* mode = argv[1];
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sig;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, 0);
  sigaction(SIGILL, &sa, 0);
  if (!strcmp(mode, "cpuid")) {
    uint32_t a, b, c, d;
    char vendor[13] = {0};
    cpuid(0, &a, &b, &c, &d);
    memcpy(vendor, &b, 4); memcpy(vendor + 4, &d, 4); memcpy(vendor + 8, &c, 4);
    printf("vendor=%s\n", vendor);
    cpuid(1, &a, &b, &c, &d);
    printf("leaf1=%08x %08x\n", a, d);
    cpuid(0xC0000000, &a, &b, &c, &d);
    printf("c0000000=%08x\n", a);
    cpuid(0xC0000001, &a, &b, &c, &d);
    printf("c0000001=%08x\n", d);
  } else if (!strcmp(mode, "xsha1")) {
    static uint8_t state[128] __attribute__((aligned(16)));
    static const uint32_t h0[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    static char msg[1000];
    for (int i = 0; i < 1000; ++i) msg[i] = (char)(i * 7);
    memcpy(state, h0, sizeof h0);
    const char* s = msg;
    uintptr_t n = sizeof msg, done = 0;
    void* st = state;
    __asm__ volatile(".byte 0xf3,0x0f,0xa6,0xc8" : "+S"(s), "+c"(n), "+a"(done), "+D"(st) :: "memory");
    printf("eax=%lu esi_adv=%ld\n", (unsigned long)done, (long)(s - msg));
    printf("digest=");
    for (int i = 0; i < 5; ++i) {
      uint32_t w = ((uint32_t*)state)[i];  /* §4.1: H0..H4 as 32-bit words */
      printf("%08x", w);
    }
    printf("\n");
  } else if (!strcmp(mode, "repne")) {
    /* F2 (REPNE) on XSHA1 is undefined: reported once per PC as a diagnostic. */
    for (volatile int k = 0; k < 3; ++k) repne_xsha1();
    printf("done=1\n");
  } else if (!strcmp(mode, "xcrypt")) {
    static uint8_t cw[16] __attribute__((aligned(16))) = {0x0A};
    static uint8_t key[16] __attribute__((aligned(16))), in[16] __attribute__((aligned(16))),
        out[16] __attribute__((aligned(16)));
    const uint8_t* s = in;
    uint8_t* d = out;
    uintptr_t n = 1;
    __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xc8" : "+S"(s), "+D"(d), "+c"(n) : "b"(key), "d"(cw) : "memory");
    printf("xcrypt_sig=%d\n", sig_seen);
  } else if (!strcmp(mode, "bad0fa7")) {
    __asm__ volatile(".byte 0x0f,0xa7");  /* 0F A7 followed by an unknown byte */
    __asm__ volatile(".byte 0xf8");
    printf("sig=%d code=%d\n", sig_seen, code_seen);
  } else if (!strcmp(mode, "privileged")) {
    __asm__ volatile("cli; nop");
    printf("cli=%d,%d\n", sig_seen, code_seen);
    sig_seen = 0;
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(0x1107));
    printf("rdmsr=%d,%d\n", sig_seen, code_seen);
  } else if (!strcmp(mode, "rdtsc")) {
    uint32_t lo1, hi1, lo2, hi2;
    __asm__ volatile("rdtsc" : "=a"(lo1), "=d"(hi1));
    __asm__ volatile("rdtsc" : "=a"(lo2), "=d"(hi2));
    uint64_t t1 = ((uint64_t)hi1 << 32) | lo1, t2 = ((uint64_t)hi2 << 32) | lo2;
    printf("increasing=%d\n", t2 > t1);
    /* RDTSC ends its block (docs/emulator.md, "Unicorn"): what follows the second read in
       the same asm statement is not in the difference. */
    uint32_t d0, d1, x = 3;
    __asm__ volatile("rdtsc; mov %%eax, %%esi; rdtsc; sub %%esi, %%eax"
                     : "=a"(d0) : : "edx", "esi");
    __asm__ volatile("rdtsc; mov %%eax, %%esi; rdtsc; sub %%esi, %%eax\n\t"
                     ".rept 16\n\timul %%ecx, %%ecx\n\t.endr"
                     : "=a"(d1), "+c"(x) : : "edx", "esi");
    printf("tail_excluded=%d\n", d0 == d1 && d0 > 0);
  }
  return 0;
}
)SRC";

class CpuTest : public ::testing::TestWithParam<Arch> {
 protected:
  GuestRun run(const char* mode, const char* cpu = nullptr, bool stats = false) {
    const std::string exe = build_guest(kProgram, GetParam(), "-static -O1 -fno-pie -no-pie");
    if (exe.empty()) {
      GuestRun r;
      r.load_error = true;
      r.error = "skip";
      return r;
    }
    std::vector<std::string> args = {mode};
    GuestRun r = run_guest(exe, args, cpu);
    (void)stats;
    return r;
  }
};

#define RUN_OR_SKIP(r, ...)                            \
  const GuestRun r = run(__VA_ARGS__);                 \
  if (r.load_error && r.error == "skip") GTEST_SKIP(); \
  ASSERT_FALSE(r.load_error) << r.error

TEST_P(CpuTest, CpuidComesFromTheModel) {
  RUN_OR_SKIP(r, "cpuid");
  const CpuModel& m = *find_cpu_model(default_cpu(GetParam()));
  const Padlock padlock(m);
  EXPECT_EQ(field(r.out, "vendor"), "CentaurHauls");  // §1.1
  char buf[64];
  const CpuidResult l1 = padlock.cpuid(1, 0);
  std::snprintf(buf, sizeof buf, "%08x %08x", l1.eax, l1.edx);
  EXPECT_EQ(field(r.out, "leaf1"), buf);
  EXPECT_EQ(field(r.out, "c0000000"), "c0000001");  // §1.3: the Centaur leaves exist
  std::snprintf(buf, sizeof buf, "%08x", padlock.centaur_features());
  EXPECT_EQ(field(r.out, "c0000001"), buf);  // §1.3 EDX: present and enabled units
}

TEST_P(CpuTest, RepXsha1GoesToTheModel) {
  RUN_OR_SKIP(r, "xsha1");
  ASSERT_FALSE(r.result.signaled) << r.err;
  unsigned char msg[1000], md[20];
  for (int i = 0; i < 1000; ++i) msg[i] = static_cast<unsigned char>(i * 7);
  SHA1(msg, sizeof msg, md);
  std::string hex;
  char b[3];
  for (unsigned char x : md) {
    std::snprintf(b, sizeof b, "%02x", x);
    hex += b;
  }
  EXPECT_EQ(field(r.out, "digest"), hex);               // FIPS 180-2 SHA-1 via OpenSSL
  EXPECT_EQ(field(r.out, "eax"), "1000 esi_adv=1000");  // §4.1: EAX = ECX, ESI advanced
}

TEST_P(CpuTest, UndefinedPrefixIsReportedOncePerPc) {
  RUN_OR_SKIP(r, "repne");
  EXPECT_EQ(field(r.out, "done"), "1");
  const std::string line = "padlock-emu: diagnostic: repne-prefix at 0x";
  const size_t first = r.err.find(line);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(line, first + 1), std::string::npos) << "shown once per name and PC";
}

TEST_P(CpuTest, UnknownThirdByteIsSigill) {
  RUN_OR_SKIP(r, "bad0fa7");
  EXPECT_EQ(field(r.out, "sig"), "4 code=2");  // SIGILL, ILL_ILLOPN
}

TEST_P(CpuTest, PrivilegedInstructionsFaultInUserMode) {
  RUN_OR_SKIP(r, "privileged");
  EXPECT_EQ(field(r.out, "cli"), "11,128");    // #GP: SIGSEGV, SI_KERNEL
  EXPECT_EQ(field(r.out, "rdmsr"), "11,128");  // MSR 0x1107 is not readable at CPL 3
}

TEST_P(CpuTest, RdtscIncreases) {
  RUN_OR_SKIP(r, "rdtsc");
  EXPECT_EQ(field(r.out, "increasing"), "1");
  // The counter covers the instructions up to the RDTSC, not the rest of its block.
  EXPECT_EQ(field(r.out, "tail_excluded"), "1");
}

INSTANTIATE_TEST_SUITE_P(Arches, CpuTest, ::testing::Values(Arch::I386, Arch::X86_64),
                         [](const auto& info) { return std::string(arch_name(info.param)); });

// Nehemiah C5XL has the RNG only (§1.1): REP XCRYPT raises #UD (§1.3 EDX[6] = 0), caught
// here by a SIGILL handler; Nehemiah C5P has ACE and runs it. (Nehemiah is 32-bit only.)
TEST(CpuNehemiah, XcryptWithoutAceIsSigill) {
  const std::string exe = build_guest(kProgram, Arch::I386, "-static -O1 -fno-pie -no-pie");
  if (exe.empty()) GTEST_SKIP() << "gcc -m32 -static unavailable";
  const GuestRun r = run_guest(exe, {"xcrypt"}, "nehemiah-c5xl");
  ASSERT_FALSE(r.load_error) << r.error;
  EXPECT_EQ(field(r.out, "xcrypt_sig"), "4");  // SIGILL (the handler skipped it)
  const GuestRun ok = run_guest(exe, {"xcrypt"}, "nehemiah-c5p");
  ASSERT_FALSE(ok.load_error) << ok.error;
  EXPECT_EQ(field(ok.out, "xcrypt_sig"), "0");
}

// Without a handler, XCRYPT on Nehemiah C5XL kills the guest with SIGILL and one line.
TEST(CpuDeath, XcryptOnNehemiahC5xlDiesWithSigill) {
  const std::string exe = build_guest(
      "int main(void){static unsigned char cw[16] __attribute__((aligned(16)));"
      "__asm__ volatile(\".byte 0xf3,0x0f,0xa7,0xc8\" :: \"d\"(cw), \"c\"(1) : \"memory\");"
      "return 0;}",
      Arch::I386, "-static -O1 -fno-pie -no-pie");
  if (exe.empty()) GTEST_SKIP();
  const GuestRun r = run_guest(exe, {}, "nehemiah-c5xl");
  ASSERT_FALSE(r.load_error) << r.error;
  EXPECT_TRUE(r.result.signaled);
  EXPECT_EQ(r.result.signal, SIGILL);
  EXPECT_NE(r.err.find("SIGILL (Illegal instruction) at 0x"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("xcryptecb"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace padlock::emu::test
