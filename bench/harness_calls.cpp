// Calls per second of a small PadLock driver function through the function-level harness
// (Machine::call: the call frame, the run, the PadLock instruction in the execution core)
// against raw Unicorn: uc_emu_start over the same code with the PadLock instruction
// replaced by a NOP of the same length, the stack and return address set by hand.
// Run by bench/run_all.py.
//
// usage: bench_harness [CALLS]   (default 200000)
#include <unicorn/unicorn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "emulator/harness/machine.hpp"
#include "models/cpu_model.hpp"

namespace {

using padlock::emu::Machine;

constexpr uint32_t kCode = 0x20000000, kData = 0x20010000;
constexpr uint32_t kIn = kData, kOut = kData + 0x100, kKey = kData + 0x200, kCw = kData + 0x300;

// mov esi, IN; mov edi, OUT; mov ebx, KEY; mov edx, CW; mov ecx, 1; rep xcryptecb; ret
std::vector<uint8_t> driver(bool padlock) {
  std::vector<uint8_t> c;
  auto mov = [&](uint8_t op, uint32_t v) {
    c.push_back(op);
    for (int i = 0; i < 4; ++i) c.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  mov(0xBE, kIn);
  mov(0xBF, kOut);
  mov(0xBB, kKey);
  mov(0xBA, kCw);
  mov(0xB9, 1);
  const uint8_t xcrypt[] = {0xF3, 0x0F, 0xA7, 0xC8};  // rep xcryptecb (§3.1)
  const uint8_t nop4[] = {0x0F, 0x1F, 0x40, 0x00};    // nopl 0(%eax)
  c.insert(c.end(), padlock ? xcrypt : nop4, (padlock ? xcrypt : nop4) + 4);
  c.push_back(0xC3);
  return c;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double harness_rate(long calls, bool timing) {
  const padlock::CpuModel* cpu = padlock::find_cpu_model("esther");
  Machine m(*cpu, 32, padlock::PadlockConfig{}, cpu->default_mhz.value,
            padlock::emu::PadlockTiming{timing, timing});
  m.memory().map(kCode, 0x1000, padlock::emu::kPageRead | padlock::emu::kPageExec);
  m.memory().map(kData, 0x1000, padlock::emu::kPageRead | padlock::emu::kPageWrite);
  const std::vector<uint8_t> code = driver(true);
  m.memory().write(kCode, code.data(), code.size());
  const uint32_t cw[4] = {10, 0, 0, 0};  // AES-128 encryption, hardware key expansion (§3.2)
  m.memory().write(kCw, cw, sizeof cw);
  m.call(kCode, {});  // translate once
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) m.call(kCode, {});
  return calls / seconds_since(t0);
}

double raw_rate(long calls) {
  uc_engine* uc = nullptr;
  if (uc_open(UC_ARCH_X86, UC_MODE_32, &uc) != UC_ERR_OK) std::exit(1);
  constexpr uint32_t kStack = 0x30000000, kSentinel = 0x31000000;
  uc_mem_map(uc, kCode, 0x1000, UC_PROT_READ | UC_PROT_EXEC);
  uc_mem_map(uc, kData, 0x1000, UC_PROT_READ | UC_PROT_WRITE);
  uc_mem_map(uc, kStack, 0x1000, UC_PROT_READ | UC_PROT_WRITE);
  uc_mem_map(uc, kSentinel, 0x1000, UC_PROT_READ | UC_PROT_EXEC);
  const std::vector<uint8_t> code = driver(false);
  uc_mem_write(uc, kCode, code.data(), code.size());
  auto call = [&] {
    const uint32_t sp = kStack + 0x800, ret = kSentinel;
    uc_mem_write(uc, sp, &ret, 4);
    uc_reg_write(uc, UC_X86_REG_ESP, &sp);
    uc_emu_start(uc, kCode, kSentinel, 0, 0);
  };
  call();
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) call();
  const double rate = calls / seconds_since(t0);
  uc_close(uc);
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 200000;
  const double raw = raw_rate(calls);
  const double on = harness_rate(calls, true);
  const double off = harness_rate(calls, false);
  std::printf("  raw Unicorn uc_emu_start (NOP for the PadLock insn) %10.0f calls/s\n", raw);
  std::printf("  Machine::call, timing on                            %10.0f calls/s  %5.2fx raw\n",
              on, on / raw);
  std::printf("  Machine::call, timing off                           %10.0f calls/s  %5.2fx raw\n",
              off, off / raw);
  return 0;
}
