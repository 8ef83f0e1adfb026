// The Unicorn CPU as a Linux user-mode process sees it: long mode or 32-bit protected
// mode at CPL 3 with Linux's selectors, a GDT in guest memory (for i386 TLS), and the
// full register context that signal frames save and restore.
#pragma once

#include <unicorn/unicorn.h>

#include <cstdint>

#include "emulator/memory/address_space.hpp"

namespace padlock::emu {

// Linux x86-64 kernel selectors (a 32-bit process on a 64-bit kernel sees the same).
inline constexpr uint16_t kUserCs32 = 0x23;
inline constexpr uint16_t kUserDs = 0x2b;
inline constexpr uint16_t kUserCs64 = 0x33;
inline constexpr unsigned kGdtTlsMin = 12;  // GDT_ENTRY_TLS_MIN on x86-64 kernels
inline constexpr unsigned kGdtTlsEntries = 3;

// Register context, x86-64 superset; a 32-bit guest uses the low halves of gpr[0..7].
struct CpuContext {
  uint64_t gpr[16] = {};  // x86 encoding order: AX CX DX BX SP BP SI DI R8..R15
  uint64_t ip = 0;
  uint64_t flags = 0;
  uint16_t cs = 0, ss = 0, ds = 0, es = 0, fs = 0, gs = 0;
  uint64_t fs_base = 0, gs_base = 0;     // 64-bit guests only
  alignas(16) uint8_t fxsave[512] = {};  // x87/SSE state in FXSAVE layout
};

class Cpu {
 public:
  // `model` is a uc_cpu_x86 value; the window is mapped as Unicorn's RAM.
  Cpu(bool guest64, int model, AddressSpace& mem);
  ~Cpu();
  Cpu(const Cpu&) = delete;
  Cpu& operator=(const Cpu&) = delete;

  uc_engine* uc() const { return uc_; }
  bool guest64() const { return guest64_; }

  // Builds the GDT and a boot stub in two pages at `system_page` (mapped read-only and
  // read-exec), drops to CPL 3 through IRET, and learns how to clear QEMU's record of an
  // exception in flight (see clear_exception_state). Must run before any hook that
  // would see the probe's #GP.
  void boot(uint64_t system_page);
  // Initial user registers: all zero except sp, ip and the Linux start-up FPU state.
  void start_user(uint64_t ip, uint64_t sp);

  uint64_t pc() const;
  void set_pc(uint64_t pc);
  uint64_t reg(int uc_reg) const;
  void set_reg(int uc_reg, uint64_t value);
  // The 8 legacy GPRs in encoding order (AX CX DX BX SP BP SI DI).
  void read_gpr8(uint64_t out[8]) const;
  void write_gpr8(const uint64_t in[8], uint8_t mask);

  void save(CpuContext& c) const;
  void load(const CpuContext& c);

  // GDT entries in guest memory (TLS: set_thread_area / get_thread_area).
  uint64_t gdt_entry(unsigned index) const;
  void set_gdt_entry(unsigned index, uint64_t desc);
  // Reloads FS/GS if they select `index`, so a changed descriptor takes effect.
  void reload_segments_using(unsigned index);

  // QEMU keeps the last contributory exception (#DE, #GP ...) in env->old_exception
  // and, because Unicorn's hook replaces delivery, never clears it: the next one would
  // become a double fault. Call after handling such an exception.
  void clear_exception_state();
  bool exception_state_fix_available() const { return old_exception_offset_ >= 0; }

 private:
  void probe_exception_state(uint64_t probe_ip);
  bool left_user_mode() const;
  static constexpr uint64_t kEflagsVm = uint64_t{1} << 17;

  uc_engine* uc_ = nullptr;
  bool guest64_;
  AddressSpace& mem_;
  uint64_t gdt_base_ = 0;
  long old_exception_offset_ = -1;  // byte offset of old_exception in a uc_context
  uc_context* scratch_ = nullptr;
  uc_context* user_mode_ = nullptr;  // 32-bit user mode as boot() left it
};

// Bits of a segment descriptor (Intel SDM vol. 3 §3.4.5) for TLS entries.
uint64_t make_descriptor(uint32_t base, uint32_t limit, bool code, bool dpl3, bool long_mode,
                         bool big, bool granular, bool present, bool writable);

}  // namespace padlock::emu
