#include "emulator/process.hpp"

#include <capstone/capstone.h>
#include <elf.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "emulator/cpu_features.hpp"
#include "emulator/host_signals.hpp"
#include "emulator/initial_stack.hpp"

namespace padlock::emu {

namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;
constexpr uint64_t kStackSize = 8ull << 20;   // the stack we map (and report in RLIMIT_STACK)
constexpr uint64_t kStackGap = 128ull << 20;  // between the stack and the mmap area
constexpr uint64_t kMmapFloor = 0x10000;      // Linux's default mmap_min_addr

Process* g_current = nullptr;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Trampolines from Unicorn's C callbacks to the process.
void hook_syscall(uc_engine*, void* p) {
  static_cast<Process*>(p)->on_syscall_insn();
}
void hook_sysenter(uc_engine*, void* p) {
  static_cast<Process*>(p)->on_sysenter();
}
void hook_intr(uc_engine*, uint32_t intno, void* p) {
  static_cast<Process*>(p)->on_interrupt(intno);
}
bool hook_invalid(uc_engine*, void* p) {
  return static_cast<Process*>(p)->on_invalid_insn();
}
int hook_cpuid(uc_engine*, void* p) {
  return static_cast<Process*>(p)->on_cpuid();
}
int hook_rdtsc(uc_engine*, void* p) {
  return static_cast<Process*>(p)->on_rdtsc();
}
void hook_block(uc_engine*, uint64_t address, uint32_t size, void* p) {
  static_cast<Process*>(p)->on_block(address, size);
}
bool hook_tlb(uc_engine*, uint64_t va, uc_mem_type type, uc_tlb_entry* e, void* p) {
  uint64_t paddr = 0;
  int perms = 0;
  if (!static_cast<Process*>(p)->on_tlb_fill(va, type, &paddr, &perms)) return false;
  e->paddr = paddr;
  e->perms = static_cast<uc_prot>(perms);
  return true;
}

}  // namespace

Process* current_process() {
  return g_current;
}

Process::Process(const RunOptions& opts) : opts_(opts) {
  if (opts_.cpu == nullptr) throw LoadError("no CPU model selected");
  mhz_ = opts_.mhz > 0 ? opts_.mhz : opts_.cpu->default_mhz.value;
  elf_ = ElfFile::read(opts_.program);
  guest64_ = elf_.is64;
  if (guest64_ && !opts_.cpu->long_mode) {
    throw LoadError(opts_.program + ": a 64-bit (x86-64) program, but CPU model '" +
                    opts_.cpu->name + "' has no long mode (only nano does)");
  }
  if (!elf_.interp.empty()) {
    // Dynamic loading (a later issue) maps elf_.interp with load_elf() next to the
    // program and passes its base in AT_BASE; until then this is a clear error.
    throw LoadError(opts_.program + ": dynamically linked (interpreter " + elf_.interp +
                    "); padlock-emu runs statically linked programs only");
  }
  PadlockConfig pc;
  pc.seed = opts_.seed;
  pc.errata = opts_.errata;
  padlock_ = std::make_unique<Padlock>(*opts_.cpu, pc);
  diag_ = std::make_unique<DiagnosticPrinter>(stats_, opts_.log);
  mem_ = std::make_unique<AddressSpace>(guest64_);
  cpu_ = std::make_unique<Cpu>(guest64_, unicorn_cpu_model(*padlock_), *mem_);
  blocks_ = std::make_unique<BlockCache>(guest64_, *mem_);
  csh h = 0;
  if (cs_open(CS_ARCH_X86, guest64_ ? CS_MODE_64 : CS_MODE_32, &h) != CS_ERR_OK) {
    throw LoadError("capstone: cannot open the x86 disassembler");
  }
  cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
  cs_ = h;
  pid_ = getpid();
  kernel_.random_state = opts_.seed ^ 0x6765747261646F6Dull;  // getrandom stream
  char real[PATH_MAX];
  exe_path_ = realpath(opts_.program.c_str(), real) != nullptr ? real : opts_.program;
  load_program();
  install_hooks();
}

Process::~Process() {
  if (g_current == this) g_current = nullptr;
  if (cs_ != 0) {
    csh h = cs_;
    cs_close(&h);
  }
}

uint64_t Process::random_u64() {
  return splitmix64(kernel_.random_state);
}

void Process::load_program() {
  const uint64_t window = mem_->size();
  MemoryLayout& l = layout_;
  l.system_page = window - 2 * kPage;
  if (guest64_) {
    l.stack_top = (window - (16ull << 20)) & ~(kPage - 1);
  } else {
    l.stack_top = 0xC0000000ull;  // the classic 3 GiB split
  }
  l.stack_size = kStackSize;
  l.mmap_top = l.stack_top - kStackSize - kStackGap;
  l.mmap_floor = kMmapFloor;

  // Static PIE (ET_DYN without PT_INTERP) goes where Linux puts PIEs with ASLR off.
  uint64_t bias = 0;
  if (elf_.type == ET_DYN) {
    bias = guest64_ ? ((window / 3 * 2) & ~uint64_t{0xFFFFF}) : 0x56555000ull;
    if (guest64_ && window > 0x555555554000ull) bias = 0x555555554000ull;
    bias -= elf_.min_vaddr;
  }
  // READ_IMPLIES_EXEC for i386 programs without PT_GNU_STACK (Linux elf_read_implies_exec).
  const bool read_implies_exec = !guest64_ && !elf_.has_gnu_stack;
  const LoadedImage img = load_elf(elf_, *mem_, bias, read_implies_exec);
  l.brk_start = l.brk = img.end;

  const bool exec_stack = read_implies_exec || elf_.exec_stack;
  const uint64_t stack_base = l.stack_top - kStackSize;
  if (!mem_->map_anonymous(stack_base, kStackSize,
                           kPageRead | kPageWrite | (exec_stack ? kPageExec : 0))) {
    throw LoadError("cannot map the stack");
  }

  StackImage si;
  si.argv = opts_.argv;
  if (si.argv.empty()) si.argv.push_back(opts_.program);
  si.envp = opts_.envp;
  si.execfn = opts_.program;
  si.platform = guest64_ ? "x86_64" : "i686";
  uint64_t seed_state = opts_.seed ^ 0x41545F52414E444Full;  // "AT_RANDO"
  for (size_t i = 0; i < 16; i += 8) {
    const uint64_t r = splitmix64(seed_state);
    std::memcpy(si.random.data() + i, &r, 8);
  }
  const CpuidResult leaf1 = padlock_->cpuid(1, 0);
  si.auxv = {
      {AT_HWCAP, leaf1.edx},
      {AT_PAGESZ, kPage},
      {AT_CLKTCK, static_cast<uint64_t>(sysconf(_SC_CLK_TCK))},
      {AT_PHDR, img.phdr},
      {AT_PHENT, img.phent},
      {AT_PHNUM, img.phnum},
      {AT_BASE, 0},
      {AT_FLAGS, 0},
      {AT_ENTRY, img.entry},
      {AT_UID, getuid()},
      {AT_EUID, geteuid()},
      {AT_GID, getgid()},
      {AT_EGID, getegid()},
      {AT_SECURE, 0},
      {AT_HWCAP2, 0},
  };
  const StackLayout sl = build_initial_stack(*mem_, l.stack_top, kStackSize / 2, guest64_, si);

  cpu_->boot(l.system_page);
  cpu_->start_user(img.entry, sl.sp);
}

void Process::install_hooks() {
  uc_engine* uc = cpu_->uc();
  uc_hook h;
  auto add = [&](int type, void* cb, int insn = -1) {
    const uc_err e = insn < 0 ? uc_hook_add(uc, &h, type, cb, this, 1, 0)
                              : uc_hook_add(uc, &h, type, cb, this, 1, 0, insn);
    if (e != UC_ERR_OK) throw LoadError(std::string("unicorn: hook: ") + uc_strerror(e));
  };
  add(UC_HOOK_TLB_FILL, reinterpret_cast<void*>(hook_tlb));
  add(UC_HOOK_INTR, reinterpret_cast<void*>(hook_intr));
  add(UC_HOOK_INSN_INVALID, reinterpret_cast<void*>(hook_invalid));
  add(UC_HOOK_INSN, reinterpret_cast<void*>(hook_syscall), UC_X86_INS_SYSCALL);
  add(UC_HOOK_INSN, reinterpret_cast<void*>(hook_sysenter), UC_X86_INS_SYSENTER);
  add(UC_HOOK_INSN, reinterpret_cast<void*>(hook_cpuid), UC_X86_INS_CPUID);
  add(UC_HOOK_INSN, reinterpret_cast<void*>(hook_rdtsc), UC_X86_INS_RDTSC);
  if (opts_.icount) enable_block_hook();
}

void Process::enable_block_hook() {
  if (block_hook_on_) return;
  uc_engine* uc = cpu_->uc();
  if (uc_hook_add(uc, &block_hook_, UC_HOOK_BLOCK, reinterpret_cast<void*>(hook_block), this, 1,
                  0) != UC_ERR_OK) {
    return;
  }
  // Blocks translated before the hook existed have no call to it.
  uc_ctl_flush_tb(uc);
  block_hook_on_ = true;
  want_block_hook_ = false;
}

void Process::on_block(uint64_t address, uint32_t size) {
  const BlockInfo& b = blocks_->lookup(address, size);
  stats_.guest_insns += b.insns;
  // §1.8, §3.2: PUSHF stores EFLAGS, which clears EFLAGS[30]; POPF and IRET load it and
  // cannot set it (§1.8 step 3: the load leaves it 0). No PadLock instruction can precede
  // them inside one block (PadLock instructions end blocks), so clearing at block entry
  // is exact.
  if (b.clears_eflags30) clear_eflags30();
}

void Process::request_stop() {
  stop_requested_ = true;
  uc_emu_stop(cpu_->uc());
}

void Process::exit_group(int code) {
  exited_ = true;
  exit_code_ = code;
  request_stop();
}

// --- guest memory helpers ------------------------------------------------------------------

uint8_t* Process::user_ptr(uint64_t va, uint64_t len, bool write) {
  return mem_->translate(va, len, write ? Access::Write : Access::Read);
}

bool Process::read_user(uint64_t va, void* dst, uint64_t len) {
  const uint8_t* p = user_ptr(va, len, false);
  if (p == nullptr) return false;
  std::memcpy(dst, p, len);
  return true;
}

bool Process::write_user(uint64_t va, const void* src, uint64_t len) {
  uint8_t* p = user_ptr(va, len, true);
  if (p == nullptr) return false;
  std::memcpy(p, src, len);
  return true;
}

bool Process::read_cstring(uint64_t va, std::string& out, size_t max) {
  out.clear();
  while (out.size() < max) {
    const uint64_t chunk = kPage - (va & (kPage - 1));
    const uint8_t* p = user_ptr(va, 1, false);
    if (p == nullptr) return false;
    const uint64_t n = std::min<uint64_t>(chunk, max - out.size());
    const void* nul = std::memchr(p, 0, n);
    if (nul != nullptr) {
      out.append(reinterpret_cast<const char*>(p), static_cast<const uint8_t*>(nul) - p);
      return true;
    }
    out.append(reinterpret_cast<const char*>(p), n);
    va += n;
  }
  return false;
}

uint64_t Process::get_word(uint64_t va, bool& ok) {
  if (guest64_) {
    uint64_t v = 0;
    ok = get(va, v);
    return v;
  }
  uint32_t v = 0;
  ok = get(va, v);
  return v;
}

bool Process::put_word(uint64_t va, uint64_t v) {
  if (guest64_) return put(va, v);
  return put(va, static_cast<uint32_t>(v));
}

std::string Process::disassemble(uint64_t pc) {
  const uint64_t avail = mem_->accessible_with(pc, 15, kPageMapped | kPageRead);
  if (avail == 0) return "(unreadable)";
  cs_insn* insn = nullptr;
  const size_t n = cs_disasm(cs_, mem_->host(pc), avail, pc, 1, &insn);
  if (n == 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "(bytes %02x %02x %02x)", mem_->host(pc)[0],
                  avail > 1 ? mem_->host(pc)[1] : 0, avail > 2 ? mem_->host(pc)[2] : 0);
    return buf;
  }
  std::string s = insn[0].mnemonic;
  if (insn[0].op_str[0] != '\0') s += std::string(" ") + insn[0].op_str;
  cs_free(insn, n);
  return s;
}

// --- the run loop ------------------------------------------------------------------------

RunResult Process::run() {
  g_current = this;
  host_signals_init(*this);
  while (!exited_ && !fatal_) {
    collect_host_signals(*this);
    deliver_pending();
    if (exited_ || fatal_) break;
    tlb_fault_ = false;
    fault_pending_ = false;
    stop_requested_ = false;
    sigreturn_ = SigreturnKind::None;
    host_signals_running(true);
    const uc_err err = uc_emu_start(cpu_->uc(), cpu_->pc(), 0, 0, 0);
    host_signals_running(false);
    handle_stop(err);
    last_syscall_eintr_ = false;
  }
  host_signals_restore();
  stats_.blocks_decoded = blocks_->decoded();
  if (exited_) {
    result_ = RunResult{};
    result_.exit_code = exit_code_;
  }
  if (opts_.stats) stats_.print(opts_.log, mhz_);
  g_current = nullptr;
  return result_;
}

}  // namespace padlock::emu
