#include "emulator/cpu/cpu.hpp"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace padlock::emu {

namespace {

constexpr int kGpr64[16] = {UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX,
                            UC_X86_REG_RSP, UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI,
                            UC_X86_REG_R8,  UC_X86_REG_R9,  UC_X86_REG_R10, UC_X86_REG_R11,
                            UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15};
constexpr int kGpr32[8] = {UC_X86_REG_EAX, UC_X86_REG_ECX, UC_X86_REG_EDX, UC_X86_REG_EBX,
                           UC_X86_REG_ESP, UC_X86_REG_EBP, UC_X86_REG_ESI, UC_X86_REG_EDI};

// GDT slots, as on a Linux x86-64 kernel.
constexpr unsigned kGdtKernelCs = 1, kGdtKernelDs = 2, kGdtUserCs32 = 4, kGdtUserDs = 5,
                   kGdtUserCs64 = 6, kGdtEntries = 16;
constexpr uint16_t kKernelDs = kGdtKernelDs * 8;

void check(uc_err e, const char* what) {
  if (e != UC_ERR_OK) {
    throw std::runtime_error(std::string("unicorn: ") + what + ": " + uc_strerror(e));
  }
}

struct Probe {
  int intno = -1;
};

void probe_intr(uc_engine* uc, uint32_t intno, void* user) {
  static_cast<Probe*>(user)->intno = static_cast<int>(intno);
  uc_emu_stop(uc);
}

}  // namespace

uint64_t make_descriptor(uint32_t base, uint32_t limit, bool code, bool dpl3, bool long_mode,
                         bool big, bool granular, bool present, bool writable) {
  uint64_t d = 0;
  d |= limit & 0xFFFFu;
  d |= uint64_t(base & 0xFFFFFFu) << 16;
  // Type: accessed always set, so loading a selector never writes the GDT.
  const uint64_t type = code ? (0x8 | 0x2 | 0x1) : (0x1 | (writable ? 0x2 : 0));
  d |= type << 40;
  d |= uint64_t{1} << 44;  // S: code or data
  if (dpl3) d |= uint64_t{3} << 45;
  if (present) d |= uint64_t{1} << 47;
  d |= uint64_t((limit >> 16) & 0xF) << 48;
  if (long_mode) d |= uint64_t{1} << 53;
  if (big) d |= uint64_t{1} << 54;
  if (granular) d |= uint64_t{1} << 55;
  d |= uint64_t(base >> 24) << 56;
  return d;
}

Cpu::Cpu(bool guest64, int model, AddressSpace& mem) : guest64_(guest64), mem_(mem) {
  check(uc_open(UC_ARCH_X86, guest64 ? UC_MODE_64 : UC_MODE_32, &uc_), "open");
  check(uc_ctl_set_cpu_model(uc_, model), "cpu model");
  check(uc_mem_map_ptr(uc_, 0, mem.size(), UC_PROT_ALL, mem.host_base()), "map window");
  check(uc_ctl_tlb_mode(uc_, UC_TLB_VIRTUAL), "virtual TLB");
  // Direct jumps to another page are chained as in qemu-user (docs/emulator.md, "Unicorn"):
  // our TLB fill maps each page to itself (TlbGate::fill), and every change of a mapping
  // or of its permissions drops the page's blocks first (invalidate_code), which unlinks
  // the jumps into them.
  check(uc_ctl_chain_pages(uc_, 1), "chain across pages");
  // No "until" address: the guest may jump anywhere, including 0.
  check(uc_ctl_exits_enable(uc_), "exits");
  check(uc_context_alloc(uc_, &scratch_), "context");
  check(uc_context_alloc(uc_, &user_mode_), "context");
  // CR4: OSFXSR (bit 9, which §1.2 also requires for PadLock) and OSXMMEXCPT (bit 10), as
  // Linux sets them; without OSFXSR QEMU raises #UD on every SSE instruction.
  uint64_t cr4 = reg(UC_X86_REG_CR4) | (1u << 9) | (1u << 10);
  check(uc_reg_write(uc_, UC_X86_REG_CR4, &cr4), "CR4");
  // CR0.AM (bit 18), as Linux sets it (CR0_STATE): with EFLAGS.AC at CPL 3 a misaligned
  // access is #AC (alignment-check.patch; docs/emulator.md, "Unicorn", item 20).
  uint64_t cr0 = reg(UC_X86_REG_CR0) | (1u << 18);
  check(uc_reg_write(uc_, UC_X86_REG_CR0, &cr0), "CR0");
}

Cpu::~Cpu() {
  if (scratch_ != nullptr) uc_context_free(scratch_);
  if (user_mode_ != nullptr) uc_context_free(user_mode_);
  if (uc_ != nullptr) uc_close(uc_);
}

uint64_t Cpu::pc() const {
  return reg(guest64_ ? UC_X86_REG_RIP : UC_X86_REG_EIP);
}
void Cpu::set_pc(uint64_t pc) {
  set_reg(guest64_ ? UC_X86_REG_RIP : UC_X86_REG_EIP, pc);
}

uint64_t Cpu::reg(int id) const {
  uint64_t v = 0;
  uc_reg_read(uc_, id, &v);
  return v;
}

void Cpu::set_reg(int id, uint64_t value) {
  uc_reg_write(uc_, id, &value);
}

void Cpu::read_gpr8(uint64_t out[8]) const {
  void* ptrs[8];
  for (int i = 0; i < 8; ++i) {
    out[i] = 0;
    ptrs[i] = &out[i];
  }
  uc_reg_read_batch(uc_, guest64_ ? kGpr64 : kGpr32, ptrs, 8);
}

void Cpu::write_gpr8(const uint64_t in[8], uint8_t mask) {
  int ids[8];
  void* ptrs[8];
  uint64_t vals[8];
  int n = 0;
  for (int i = 0; i < 8; ++i) {
    if (!(mask & (1u << i))) continue;
    ids[n] = guest64_ ? kGpr64[i] : kGpr32[i];
    vals[n] = guest64_ ? in[i] : (in[i] & 0xFFFFFFFFu);
    ptrs[n] = &vals[n];
    ++n;
  }
  if (n > 0) uc_reg_write_batch(uc_, ids, ptrs, n);
}

uint64_t Cpu::gdt_entry(unsigned index) const {
  uint64_t d = 0;
  std::memcpy(&d, mem_.host(gdt_base_ + index * 8), 8);
  return d;
}

void Cpu::set_gdt_entry(unsigned index, uint64_t desc) {
  mem_.poke(gdt_base_ + index * 8, &desc, 8);  // the GDT page is read-only to the guest
}

void Cpu::reload_segments_using(unsigned index) {
  for (int id : {UC_X86_REG_FS, UC_X86_REG_GS}) {
    const uint64_t sel = reg(id);
    if ((sel >> 3) == index && (sel & 4) == 0) set_reg(id, sel);
  }
}

void Cpu::boot(uint64_t system_page) {
  // Page 0: the GDT and the IRET frame (read-only to everyone; accessed bits preset).
  // Page 1: the boot stub, "iret; cli", read-exec.
  gdt_base_ = system_page;
  const uint64_t stub = system_page + AddressSpace::kPageSize;
  // Written while read-write; the protections below come before anything runs.
  if (!mem_.map_anonymous(system_page, 2 * AddressSpace::kPageSize, kPageRead | kPageWrite)) {
    throw std::runtime_error("cannot map the system page");
  }

  set_gdt_entry(kGdtKernelCs,
                make_descriptor(0, 0xFFFFF, true, false, guest64_, !guest64_, true, true, false));
  set_gdt_entry(kGdtKernelDs,
                make_descriptor(0, 0xFFFFF, false, false, false, true, true, true, true));
  set_gdt_entry(kGdtUserCs32,
                make_descriptor(0, 0xFFFFF, true, true, false, true, true, true, false));
  set_gdt_entry(kGdtUserDs,
                make_descriptor(0, 0xFFFFF, false, true, false, true, true, true, true));
  set_gdt_entry(kGdtUserCs64,
                make_descriptor(0, 0xFFFFF, true, true, true, false, true, true, false));
  uc_x86_mmr gdtr{};
  gdtr.base = gdt_base_;
  gdtr.limit = kGdtEntries * 8 - 1;
  check(uc_reg_write(uc_, UC_X86_REG_GDTR, &gdtr), "GDTR");

  uint8_t* code = mem_.host(stub);
  size_t n = 0;
  if (guest64_) code[n++] = 0x48;  // REX.W: IRETQ
  code[n++] = 0xCF;                // IRET
  const uint64_t probe_ip = stub + n;
  code[n++] = 0xFA;  // CLI: #GP at CPL 3

  // The IRET frame: ip, cs, flags, sp, ss (8-byte slots in long mode, 4 otherwise).
  const uint64_t frame = system_page + 0x800;
  const uint64_t user_cs = guest64_ ? kUserCs64 : kUserCs32;
  const uint64_t slots[5] = {probe_ip, user_cs, 0x202, system_page + 0x800, kUserDs};
  for (int i = 0; i < 5; ++i) {
    if (guest64_) {
      std::memcpy(mem_.host(frame + 8 * i), &slots[i], 8);
    } else {
      const uint32_t v = static_cast<uint32_t>(slots[i]);
      std::memcpy(mem_.host(frame + 4 * i), &v, 4);
    }
  }
  mem_.protect(system_page, AddressSpace::kPageSize, kPageRead);
  mem_.protect(stub, AddressSpace::kPageSize, kPageRead | kPageExec);
  uint16_t ss = kKernelDs;
  check(uc_reg_write(uc_, UC_X86_REG_SS, &ss), "SS");
  set_reg(guest64_ ? UC_X86_REG_RSP : UC_X86_REG_ESP, frame);
  probe_exception_state(stub);

  // Data segments: flat user data (IRET to CPL 3 nulls DPL-0 data selectors).
  if (!guest64_) {
    for (int id : {UC_X86_REG_DS, UC_X86_REG_ES}) {
      uint16_t sel = kUserDs;
      check(uc_reg_write(uc_, id, &sel), "data segment");
    }
  }
  check(uc_context_save(uc_, user_mode_), "context save");
}

void Cpu::probe_exception_state(uint64_t stub) {
  // Run the stub: IRET to CPL 3, then CLI raises #GP, which sets old_exception to 13.
  // The one 4-byte field that went from -1 to 13 is old_exception; prove it by clearing
  // it and taking a second #GP, which must again arrive as 13, not as #DF (8).
  Probe probe;
  uc_hook h = 0;
  check(uc_hook_add(uc_, &h, UC_HOOK_INTR, reinterpret_cast<void*>(probe_intr), &probe, 1, 0),
        "probe hook");
  const size_t size = uc_context_size(uc_);
  std::vector<uint8_t> before(size), after(size);
  check(uc_context_save(uc_, scratch_), "context save");
  std::memcpy(before.data(), scratch_, size);

  uc_emu_start(uc_, stub, 0, 0, 0);
  if (probe.intno != 13) {
    uc_hook_del(uc_, h);
    throw std::runtime_error("boot: could not enter user mode (no #GP from the probe)");
  }
  const uint64_t probe_ip = pc();
  check(uc_context_save(uc_, scratch_), "context save");
  std::memcpy(after.data(), scratch_, size);
  std::vector<long> candidates;
  for (size_t off = 0; off + 4 <= size; off += 4) {
    int32_t b, a;
    std::memcpy(&b, &before[off], 4);
    std::memcpy(&a, &after[off], 4);
    if (b == -1 && a == 13) candidates.push_back(static_cast<long>(off));
  }
  for (long off : candidates) {
    old_exception_offset_ = off;
    clear_exception_state();
    probe.intno = -1;
    uc_emu_start(uc_, probe_ip, 0, 0, 0);
    if (probe.intno == 13) break;
    old_exception_offset_ = -1;
  }
  if (old_exception_offset_ >= 0) clear_exception_state();
  uc_hook_del(uc_, h);
  // The probe left us at CPL 3 on the CLI; start_user() sets the real state.
}

void Cpu::clear_exception_state() {
  if (old_exception_offset_ < 0) return;
  if (uc_context_save(uc_, scratch_) != UC_ERR_OK) return;
  const int32_t none = -1;
  std::memcpy(reinterpret_cast<uint8_t*>(scratch_) + old_exception_offset_, &none, 4);
  uc_context_restore(uc_, scratch_);
}

void Cpu::start_user(uint64_t ip, uint64_t sp) {
  CpuContext c;
  save(c);
  std::memset(c.gpr, 0, sizeof(c.gpr));
  c.gpr[4] = sp;
  c.ip = ip;
  c.flags = 0x202;
  c.fs = c.gs = 0;
  c.fs_base = c.gs_base = 0;
  // Linux's initial FPU state (FNINIT + default MXCSR).
  std::memset(c.fxsave, 0, sizeof(c.fxsave));
  const uint16_t fcw = 0x037F;
  const uint32_t mxcsr = 0x1F80;
  std::memcpy(c.fxsave + 0, &fcw, 2);
  std::memcpy(c.fxsave + 24, &mxcsr, 4);
  load(c);
}

void Cpu::save(CpuContext& c) const {
  const int n = guest64_ ? 16 : 8;
  void* ptrs[16];
  for (int i = 0; i < 16; ++i) {
    c.gpr[i] = 0;
    ptrs[i] = &c.gpr[i];
  }
  uc_reg_read_batch(uc_, guest64_ ? kGpr64 : kGpr32, ptrs, n);
  c.ip = pc();
  c.flags = reg(guest64_ ? UC_X86_REG_RFLAGS : UC_X86_REG_EFLAGS) & 0xFFFFFFFFu;
  c.cs = static_cast<uint16_t>(reg(UC_X86_REG_CS));
  c.ss = static_cast<uint16_t>(reg(UC_X86_REG_SS));
  c.ds = static_cast<uint16_t>(reg(UC_X86_REG_DS));
  c.es = static_cast<uint16_t>(reg(UC_X86_REG_ES));
  c.fs = static_cast<uint16_t>(reg(UC_X86_REG_FS));
  c.gs = static_cast<uint16_t>(reg(UC_X86_REG_GS));
  if (guest64_) {
    c.fs_base = reg(UC_X86_REG_FS_BASE);
    c.gs_base = reg(UC_X86_REG_GS_BASE);
  }
  // FXSAVE image.
  uint8_t* fx = c.fxsave;
  std::memset(fx, 0, sizeof(c.fxsave));
  const uint16_t fcw = static_cast<uint16_t>(reg(UC_X86_REG_FPCW));
  const uint16_t fsw = static_cast<uint16_t>(reg(UC_X86_REG_FPSW));
  const uint16_t ftw = static_cast<uint16_t>(reg(UC_X86_REG_FPTAG));
  uint8_t abridged = 0;
  for (int i = 0; i < 8; ++i) {
    if (((ftw >> (2 * i)) & 3) != 3) abridged |= static_cast<uint8_t>(1u << i);
  }
  const uint32_t mxcsr = static_cast<uint32_t>(reg(UC_X86_REG_MXCSR));
  const uint32_t mxcsr_mask = 0xFFFF;
  std::memcpy(fx + 0, &fcw, 2);
  std::memcpy(fx + 2, &fsw, 2);
  fx[4] = abridged;
  std::memcpy(fx + 24, &mxcsr, 4);
  std::memcpy(fx + 28, &mxcsr_mask, 4);
  for (int i = 0; i < 8; ++i) {
    uint8_t st[16] = {};
    uc_reg_read(uc_, UC_X86_REG_ST0 + i, st);
    std::memcpy(fx + 32 + 16 * i, st, 10);
  }
  for (int i = 0; i < (guest64_ ? 16 : 8); ++i) {
    uc_reg_read(uc_, UC_X86_REG_XMM0 + i, fx + 160 + 16 * i);
  }
}

// QEMU's IRET enters virtual-8086 mode from CPL 3 when the popped EFLAGS has VM set (the
// Intel SDM's IRET does so only from CPL 0), and then loads CS and SS as real-mode
// selectors. A user context never runs there: the 32-bit protected mode of boot() comes
// back before the context is loaded, as Linux always enters a signal handler with
// __USER_CS and __USER_DS.
bool Cpu::left_user_mode() const {
  return !guest64_ && ((reg(UC_X86_REG_EFLAGS) & kEflagsVm) != 0 ||
                       reg(UC_X86_REG_CS) != kUserCs32 || reg(UC_X86_REG_SS) != kUserDs);
}

void Cpu::load(const CpuContext& c) {
  if (left_user_mode()) uc_context_restore(uc_, user_mode_);
  const int n = guest64_ ? 16 : 8;
  void* ptrs[16];
  uint64_t vals[16];
  for (int i = 0; i < n; ++i) {
    vals[i] = guest64_ ? c.gpr[i] : (c.gpr[i] & 0xFFFFFFFFu);
    ptrs[i] = &vals[i];
  }
  uc_reg_write_batch(uc_, guest64_ ? kGpr64 : kGpr32, ptrs, n);
  set_reg(guest64_ ? UC_X86_REG_RFLAGS : UC_X86_REG_EFLAGS, c.flags & ~kEflagsVm);
  if (guest64_) {
    set_reg(UC_X86_REG_FS_BASE, c.fs_base);
    set_reg(UC_X86_REG_GS_BASE, c.gs_base);
  } else {
    // Data selectors are validated by Unicorn against the GDT; a bad one becomes null.
    const int ids[4] = {UC_X86_REG_DS, UC_X86_REG_ES, UC_X86_REG_FS, UC_X86_REG_GS};
    const uint16_t sels[4] = {c.ds, c.es, c.fs, c.gs};
    for (int i = 0; i < 4; ++i) {
      uint16_t sel = sels[i];
      if (uc_reg_write(uc_, ids[i], &sel) != UC_ERR_OK) {
        sel = (i < 2) ? kUserDs : 0;
        uc_reg_write(uc_, ids[i], &sel);
      }
    }
  }
  const uint8_t* fx = c.fxsave;
  uint16_t fcw, fsw;
  uint32_t mxcsr;
  std::memcpy(&fcw, fx + 0, 2);
  std::memcpy(&fsw, fx + 2, 2);
  std::memcpy(&mxcsr, fx + 24, 4);
  set_reg(UC_X86_REG_FPCW, fcw);
  set_reg(UC_X86_REG_FPSW, fsw);
  uint16_t ftw = 0;
  for (int i = 0; i < 8; ++i) {
    if (!(fx[4] & (1u << i))) ftw |= static_cast<uint16_t>(3u << (2 * i));
  }
  for (int i = 0; i < 8; ++i) {
    uint8_t st[16] = {};
    std::memcpy(st, fx + 32 + 16 * i, 10);
    uc_reg_write(uc_, UC_X86_REG_ST0 + i, st);
  }
  set_reg(UC_X86_REG_FPTAG, ftw);
  set_reg(UC_X86_REG_MXCSR, mxcsr & 0xFFFF);
  for (int i = 0; i < (guest64_ ? 16 : 8); ++i) {
    uc_reg_write(uc_, UC_X86_REG_XMM0 + i, fx + 160 + 16 * i);
  }
  set_pc(c.ip);
}

}  // namespace padlock::emu
