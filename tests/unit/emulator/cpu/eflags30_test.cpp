// EFLAGS[30], the ACE key-reload bit (§1.8, §3.2), as the emulator keeps it: REP XCRYPT
// sets it after loading the key; storing EFLAGS (PUSHF, system calls, signal delivery)
// clears it; loading EFLAGS (POPF) never sets it; REP XSHA clears it. The guest encrypts
// one block with key A, overwrites the key with B, does one action, and encrypts again:
// a stale result (A) means bit 30 was still 1, a fresh one (B) means it was cleared.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <ostream>
#include <string>

#include "guest_harness.hpp"

namespace padlock::emu::test {
namespace {

const char* kProgram = R"SRC(
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static uint8_t cw[16] __attribute__((aligned(16))) = {0x0A}; /* ROUND 10, KEYGN 0, encrypt */
static uint8_t key[16] __attribute__((aligned(16)));
static uint8_t in[16] __attribute__((aligned(16))) = "padlock-emu test";
static uint8_t out1[16] __attribute__((aligned(16))), out2[16] __attribute__((aligned(16)));
static uint8_t sha_state[128] __attribute__((aligned(16)));

static void xcrypt_ecb(uint8_t* out) {
  const uint8_t* s = in;
  uint8_t* d = out;
  uintptr_t n = 1;
  __asm__ volatile(".byte 0xf3,0x0f,0xa7,0xc8" /* rep xcryptecb */
                   : "+S"(s), "+D"(d), "+c"(n) : "b"(key), "d"(cw) : "memory");
}

static __attribute__((noinline)) void pushf_popf(void) {
#if defined(__x86_64__)
  __asm__ volatile("pushfq; popfq" ::: "memory", "cc");
#else
  __asm__ volatile("pushfl; popfl" ::: "memory", "cc");
#endif
}

static void on_usr1(int sig) { (void)sig; }

/* The second XCRYPT and the results. */
static void finish(uintptr_t f) {
  xcrypt_ecb(out2);
  printf("out1=");
  for (int i = 0; i < 16; ++i) printf("%02x", out1[i]);
  printf("\nout2=");
  for (int i = 0; i < 16; ++i) printf("%02x", out2[i]);
  printf("\npushed30=%d\n", (int)((f >> 30) & 1));
  fflush(stdout);
}

/* A page fault's handler runs the second XCRYPT before any system call: only the signal
 * delivery itself stores EFLAGS in between (the handler never returns through sigreturn). */
static void on_segv(int sig) {
  (void)sig;
  finish(0);
  _exit(0);
}
static int* volatile unmapped = (int*)16;

static uintptr_t pushed_flags(void) {
  uintptr_t f;
  __asm__ volatile("pushf; pop %0" : "=r"(f) :: "memory");
  return f;
}

int main(int argc, char** argv) {
  const char* action = argc > 1 ? argv[1] : "none";
  const uint8_t a[16] = "key number one!", b[16] = "key number two!";
  if (!strcmp(action, "pushf_early")) pushf_popf();  /* translated before any XCRYPT */
  if (!strcmp(action, "fault_handler")) signal(SIGSEGV, on_segv);
  memcpy(key, a, 16);
  xcrypt_ecb(out1);
  memcpy(key, b, 16);
  uintptr_t f = 0;
  if (!strcmp(action, "pushf_popf") || !strcmp(action, "pushf_early")) {
    pushf_popf();
  } else if (!strcmp(action, "pushf_only")) {
    f = pushed_flags();
  } else if (!strcmp(action, "popf_set")) {
    /* PUSHF clears bit 30; a POPF of an image with bit 30 set must not set it again. */
#if defined(__x86_64__)
    __asm__ volatile("pushfq; orq $0x40000000, (%%rsp); popfq" ::: "memory", "cc");
#else
    __asm__ volatile("pushfl; orl $0x40000000, (%%esp); popfl" ::: "memory", "cc");
#endif
  } else if (!strcmp(action, "syscall")) {
    syscall(SYS_getppid);
  } else if (!strcmp(action, "signal")) {
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
  } else if (!strcmp(action, "fault_handler")) {
    *unmapped = 0; /* the handler finishes */
  } else if (!strcmp(action, "xsha")) {
    static const uint32_t h0[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    memcpy(sha_state, h0, sizeof h0);
    const char* msg = "abc";
    const char* s = msg;
    uintptr_t n = 3, done = 0;
    void* st = sha_state;
    __asm__ volatile(".byte 0xf3,0x0f,0xa6,0xc8" /* rep xsha1 */
                     : "+S"(s), "+c"(n), "+a"(done), "+D"(st) :: "memory");
  } else if (!strcmp(action, "loop")) {
    /* No EFLAGS store between the two XCRYPTs, only ordinary code in several blocks. */
    volatile int x = 0;
    for (int i = 0; i < 1000; ++i) x += i;
  }
  finish(f);
  return 0;
}
)SRC";

std::string aes128_ecb_hex(const char* key, const char* block) {
  unsigned char out[32];
  int n = 0;
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nullptr, reinterpret_cast<const unsigned char*>(key),
                     nullptr);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  EVP_EncryptUpdate(ctx, out, &n, reinterpret_cast<const unsigned char*>(block), 16);
  EVP_CIPHER_CTX_free(ctx);
  std::string hex;
  char b[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(b, sizeof b, "%02x", out[i]);
    hex += b;
  }
  return hex;
}

struct Case {
  const char* action;
  bool fresh;  // the second encryption uses key B
  const char* why;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.action;
}

class Eflags30Test : public ::testing::TestWithParam<std::tuple<Arch, Case>> {};

TEST_P(Eflags30Test, KeyReloadFollowsBit30) {
  const auto [arch, c] = GetParam();
  const std::string exe = build_guest(kProgram, arch, "-static -O1 -fno-pie -no-pie");
  if (exe.empty()) GTEST_SKIP() << "gcc cannot build static " << arch_name(arch);
  const GuestRun r = run_guest(exe, {c.action});
  ASSERT_FALSE(r.load_error) << r.error;
  ASSERT_FALSE(r.result.signaled) << r.err;
  const std::string a = aes128_ecb_hex("key number one!", "padlock-emu test");
  const std::string b = aes128_ecb_hex("key number two!", "padlock-emu test");
  EXPECT_EQ(field(r.out, "out1"), a) << "the first REP XCRYPTECB must load key A (bit 30 = 0)";
  EXPECT_EQ(field(r.out, "out2"), c.fresh ? b : a) << c.why;
  // §1.8 step 3: a stored EFLAGS image has bit 30 = 0 even while the live bit is 1.
  EXPECT_EQ(field(r.out, "pushed30"), "0");
}

const Case kCases[] = {
    {"none", false, "§1.8: with EFLAGS[30] = 1 the key is not reloaded (stale key)"},
    {"loop", false, "§1.8: ordinary code does not touch EFLAGS[30]"},
    {"pushf_popf", true, "§1.8: PUSHF stores EFLAGS and clears bit 30"},
    {"pushf_only", true, "§1.8: the store alone clears bit 30"},
    {"popf_set", true, "§1.8: no instruction that loads EFLAGS can set bit 30"},
    {"pushf_early", true, "PUSHF in a block translated before the first XCRYPT still clears"},
    {"syscall", true, "§1.8: a system call enters the kernel, which stores EFLAGS"},
    {"signal", true, "§1.8: signal delivery (an exception-like EFLAGS store) clears bit 30"},
    {"fault_handler", true,
     "§1.8: a page fault's signal delivery clears bit 30, with no system call after it"},
    {"xsha", true, "§1.8 PHE: REP XSHA sets EFLAGS[30] to zero"},
};

INSTANTIATE_TEST_SUITE_P(Actions, Eflags30Test,
                         ::testing::Combine(::testing::Values(Arch::I386, Arch::X86_64),
                                            ::testing::ValuesIn(kCases)),
                         [](const auto& info) {
                           return std::string(arch_name(std::get<0>(info.param))) + "_" +
                                  std::get<1>(info.param).action;
                         });

}  // namespace
}  // namespace padlock::emu::test
