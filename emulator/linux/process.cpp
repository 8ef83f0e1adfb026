#include "emulator/linux/process.hpp"

#include <capstone/capstone.h>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "emulator/cpu/cpu_features.hpp"
#include "emulator/cpu/uc_hooks.hpp"
#include "emulator/linux/gdb_session.hpp"
#include "emulator/linux/signal/host_signals.hpp"
#include "emulator/loader/initial_stack.hpp"
#include "emulator/memory/code_pages.hpp"
#include "emulator/memory/direct_memory.hpp"
#include "emulator/observe/progress.hpp"
#include "emulator/observe/trace/run_observers.hpp"

namespace padlock::emu {

namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;
constexpr uint64_t kStackSize = 8ull << 20;   // the stack we map (and report in RLIMIT_STACK)
constexpr uint64_t kStackGap = 128ull << 20;  // between the stack and the mmap area
constexpr uint64_t kMmapFloor = 0x10000;      // Linux's default mmap_min_addr

Process* g_current = nullptr;

// execve's permission check (Linux may_open with MAY_EXEC, for the program and its
// interpreter): the effective IDs need execute permission, which a file without any x bit
// never grants, not even to root; a noexec mount refuses it too.
void require_exec_permission(const std::string& path) {
  if (faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) != 0 && errno == EACCES) {
    throw LoadError(path + ": " + std::strerror(EACCES));
  }
}

}  // namespace

Process* current_process() {
  return g_current;
}

// The padlock-emu program that execve runs the new image under: this one, or, when the
// emulator is a library in another program (the Python module, padlock_emu/_core*.so), the
// CLI beside it (padlock_emu/bin/padlock-emu). Empty if there is none.
std::string find_cli() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    const std::string exe(self, static_cast<size_t>(n));
    if (exe.size() >= 12 && exe.compare(exe.size() - 12, 12, "/padlock-emu") == 0) return exe;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&find_cli), &info) != 0 && info.dli_fname != nullptr) {
    std::string dir = info.dli_fname;
    dir = dir.substr(0, dir.rfind('/') + 1);
    const std::string cli = dir + "bin/padlock-emu";
    if (access(cli.c_str(), X_OK) == 0) return cli;
  }
  return "";
}

Process::Process(const RunOptions& opts) : opts_(opts) {
  // A program that fails to load throws from here, and no destructor runs: what the
  // destructor would release (the disassembler, direct memory) is released now.
  try {
    if (opts_.cpu == nullptr) throw LoadError("no CPU model selected");
    mhz_ = opts_.mhz > 0 ? opts_.mhz : opts_.cpu->default_mhz.value;
    paths_ = GuestPaths(opts_.sysroot);
    if (!opts_.sandbox.empty()) sandbox_ = Sandbox(opts_.sandbox, paths_.sysroot(), opts_.net);
    // An absolute PROGRAM is a guest path like any other: the sysroot's copy first.
    const std::string program = paths_.resolve(opts_.program);
    require_exec_permission(program);
    elf_ = ElfFile::read(program);
    id_.guest64 = elf_.is64;
    if (id_.guest64 && !opts_.cpu->long_mode) {
      throw LoadError(opts_.program + ": a 64-bit (x86-64) program, but CPU model '" +
                      opts_.cpu->name + "' has no long mode (only nano does)");
    }
    if (!elf_.interp.empty()) read_interpreter();
    PadlockConfig pc;
    pc.seed = opts_.seed;
    pc.errata = opts_.errata;
    padlock_ = std::make_unique<Padlock>(*opts_.cpu, pc);
    diag_ = std::make_unique<DiagnosticPrinter>(stats_, opts_.log);
    mem_ = std::make_unique<AddressSpace>(id_.guest64);
    user_ = UserMemory(*mem_, id_.guest64);
    VmConfig vc;
    vc.max_memory = opts_.max_memory;
    vc.read_implies_exec = !id_.guest64 && !elf_.has_gnu_stack;
    VmHost& host = *this;
    vm_ = std::make_unique<AddressSpacePolicy>(*mem_, host, paths_, vc);
    cpu_ = std::make_unique<Cpu>(id_.guest64, unicorn_cpu_model(*padlock_), *mem_);
    // Before anything is mapped: the host's protections mirror the guest's from the start.
    if (!track_code_pages(cpu_->uc(), *mem_)) throw LoadError("unicorn: no code page hook");
    if (opts_.direct_memory) direct_memory_ = direct_memory_enable(cpu_->uc(), *mem_);
    // Timing (docs/timing.md): the guest's clock at --mhz, the periodic interrupt model and the
    // caches; per-block x86 costs come from the core's measured instruction costs
    // (models/timing/x86_measured.hpp, x86_block_model.hpp).
    VirtualTimeConfig vtc;
    vtc.mhz = mhz_;
    vtc.enabled = opts_.timing;
    vtc.irq_hz = opts_.irq_hz < 0 ? 250 : opts_.irq_hz;
    vtc.seed = opts_.seed;
    vt_ = std::make_unique<VirtualTime>(vtc);
    SchedulerConfig sc;
    sc.wide = id_.guest64;
    sc.quantum_us = opts_.quantum_us;
    sc.timing = opts_.timing;
    ThreadHost& thread_host = *this;
    sched_ = std::make_unique<Scheduler>(thread_host, sig_, *vt_, user_, stats_, sc);
    PadlockTiming pt;
    pt.memory = pt.overlap = opts_.timing;
    core_ = std::make_unique<PadlockCore>(*padlock_, *vt_, stats_, diag_.get(), pt);
    core_->set_host_stop(&host_stop_.flag());
    trap_ = std::make_unique<PadlockTrap>(*cpu_, *mem_, *padlock_, *core_, *vt_);
    if (opts_.chip_check != ChipCheck::Off) chip_ = std::make_unique<ChipFeatures>(*padlock_);
    blocks_ = std::make_unique<BlockCache>(
        id_.guest64, *mem_,
        opts_.timing ? std::optional(timing::x86_core(opts_.cpu->core)) : std::nullopt,
        chip_.get());
    csh h = 0;
    if (cs_open(CS_ARCH_X86, id_.guest64 ? CS_MODE_64 : CS_MODE_32, &h) != CS_ERR_OK) {
      throw LoadError("capstone: cannot open the x86 disassembler");
    }
    cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
    cs_ = h;
    id_.pid = getpid();
    // The first thread's TID is the PID; clone numbers the others from PID + 1.
    sched_->restart(id_.pid);
    id_.emulator_path = find_cli();
    kernel_.random = GuestRandom(opts_.seed, GuestRandom::kGetrandomSalt);
    char real[PATH_MAX];
    id_.exe_path = paths_.guest_view(realpath(program.c_str(), real) != nullptr ? real : program);
    obs_ = RunObservers::create(opts_, mhz_, id_.guest64, *mem_);
    if (obs_) core_->set_listener(obs_.get());
    if (obs_ && obs_->debug_log() != nullptr) obs_->debug_log()->set_cpu(cpu_.get());
    load_program();
    install_hooks();
    if (opts_.gdb_port >= 0) gdb_ = std::make_unique<GdbSession>(*this, opts_.gdb_port);
  } catch (...) {
    release();
    throw;
  }
}

Process::~Process() {
  release();
}

void Process::release() noexcept {
  if (g_current == this) g_current = nullptr;
  if (direct_memory_) direct_memory_disable();
  direct_memory_ = false;
  if (cs_ != 0) {
    csh h = cs_;
    cs_close(&h);
    cs_ = 0;
  }
}

// PT_INTERP (the dynamic loader, ld.so) through the sysroot: the same class and machine
// as the program, itself static (Linux refuses an interpreter that names another).
void Process::read_interpreter() {
  const std::string host = paths_.resolve(elf_.interp);
  const char* hint = id_.guest64 || !paths_.sysroot().empty()
                         ? ""
                         : " (an i386 program needs an i386 sysroot: -L DIR, e.g. the one "
                           "scripts/make-sysroot.sh builds)";
  try {
    require_exec_permission(host);
    interp_ = ElfFile::read(host);
  } catch (const LoadError& e) {
    // e.what() is "<host path>: <reason>"; keep the reason only.
    std::string why = e.what();
    if (why.rfind(host + ": ", 0) == 0) why.erase(0, host.size() + 2);
    throw LoadError(opts_.program + ": cannot load its interpreter " + elf_.interp + ": " + why +
                    hint);
  }
  if (interp_.is64 != elf_.is64) {
    throw LoadError(opts_.program + ": its interpreter " + host + " is a " +
                    (interp_.is64 ? "64" : "32") + "-bit file, the program " +
                    (elf_.is64 ? "64" : "32") + "-bit" + hint);
  }
  if (!interp_.interp.empty()) {
    throw LoadError(opts_.program + ": its interpreter " + host + " names an interpreter itself");
  }
}

namespace {
std::string per_pid(const std::string& file, int pid) {
  return file.empty() ? file : file + "." + std::to_string(pid);
}
}  // namespace

namespace {

// The descriptors open in this process; `cloexec_only`: those with FD_CLOEXEC. When the
// guest starts those are the emulator's own: a descriptor the guest inherited has come
// through an exec, so it is not close-on-exec.
std::unordered_set<int> open_descriptors(bool cloexec_only = false) {
  std::unordered_set<int> fds;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return fds;
  while (const dirent* e = readdir(d)) {
    const int fd = std::atoi(e->d_name);
    if (e->d_name[0] == '.' || fd == dirfd(d)) continue;
    const int f = fcntl(fd, F_GETFD);
    if (f >= 0 && (!cloexec_only || (f & FD_CLOEXEC))) fds.insert(fd);
  }
  closedir(d);
  return fds;
}

}  // namespace

void Process::become_child() {
  id_.pid = getpid();
  // Linux: the child of fork has one thread, a copy of the caller.
  sched_->restart(id_.pid);
  forked_child_ = true;
  host_stop_.restart_in_child();
  stats_ = Stats{};
  sig_.pending = sig_.shared = 0;
  for (int i = 0; i < VirtualTime::kItimers; ++i) vt_->disarm(i);
  for (int id = 0; id < VirtualTime::kPosixTimers; ++id) {
    if (vt_->posix_slot_used(id)) {
      vt_->disarm(VirtualTime::posix_index(id));
      vt_->posix_free(id);
    }
  }
  if (obs_) {
    // The parent's observers write the parent's files: drop them here without a word (their
    // buffers were flushed before the fork), and start the child's own.
    core_->set_listener(nullptr);
    (void)obs_.release();
    opts_.trace_file = per_pid(opts_.trace_file, id_.pid);
    opts_.chrome_trace_file = per_pid(opts_.chrome_trace_file, id_.pid);
    opts_.profile_file = per_pid(opts_.profile_file, id_.pid);
    opts_.check_jsonl_file = per_pid(opts_.check_jsonl_file, id_.pid);
    opts_.check_sarif_file = per_pid(opts_.check_sarif_file, id_.pid);
    opts_.mix_file = per_pid(opts_.mix_file, id_.pid);
    opts_.debug_log_file = per_pid(opts_.debug_log_file, id_.pid);
    // The child's own output files are the emulator's descriptors too.
    const std::unordered_set<int> before = open_descriptors();
    try {
      obs_ = RunObservers::create(opts_, mhz_, id_.guest64, *mem_);
    } catch (const LoadError& e) {
      std::fprintf(opts_.log, "padlock-emu: child %d: %s\n", id_.pid, e.what());
    }
    for (const int fd : open_descriptors()) {
      if (before.count(fd) == 0) files_.host_fds.insert(fd);
    }
    if (obs_) core_->set_listener(obs_.get());
    if (block_counter_ != nullptr) {
      // Code translated before the fork counts into the parent's mix: translate it again
      // (before the next emulation slice) for the child's.
      block_counter_ = obs_ ? obs_->block_counter() : nullptr;
      recount_blocks_ = true;
      request_stop();
    }
  }
}

void Process::finish_observers() {
  if (!obs_) return;
  obs_->finish(vt_->now(), RunResult{});
  core_->set_listener(nullptr);
  obs_.reset();
}

void Process::load_program() {
  const uint64_t window = mem_->size();
  MemoryLayout& l = vm_->layout();
  l.system_page = window - 2 * kPage;
  if (id_.guest64) {
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
    bias = id_.guest64 ? ((window / 3 * 2) & ~uint64_t{0xFFFFF}) : 0x56555000ull;
    if (id_.guest64 && window > 0x555555554000ull) bias = 0x555555554000ull;
    bias -= elf_.min_vaddr;
  }
  // READ_IMPLIES_EXEC for i386 programs without PT_GNU_STACK (Linux elf_read_implies_exec).
  const bool read_implies_exec = !id_.guest64 && !elf_.has_gnu_stack;
  const LoadedImage img = load_elf(elf_, *mem_, bias, read_implies_exec);
  name_elf_segments(vm_->map_names(), elf_, bias, id_.exe_path);
  if (obs_) obs_->object_loaded(elf_.path, bias);
  l.brk_start = l.brk = img.end;

  // The interpreter goes at the top of the mmap area, as Linux puts it (ASLR off), and
  // starts first; the program's own entry reaches it through AT_ENTRY.
  uint64_t start = img.entry, interp_base = 0;
  if (!elf_.interp.empty()) {
    uint64_t ibias = 0;
    if (interp_.type == ET_DYN) {
      const uint64_t align = std::max<uint64_t>(kPage, interp_.max_align);
      const uint64_t span = interp_.max_vaddr - interp_.min_vaddr;
      if (align > window || span > window) {
        throw LoadError(elf_.interp + ": no room for the interpreter");
      }
      const uint64_t va = mem_->find_free_below(span + align - kPage, l.mmap_top, l.mmap_floor);
      if (va == 0) throw LoadError(elf_.interp + ": no room for the interpreter");
      ibias = ((va + align - 1) & ~(align - 1)) - interp_.min_vaddr;
    }
    const LoadedImage ii = load_elf(interp_, *mem_, ibias, read_implies_exec, true);
    char real[PATH_MAX];
    name_elf_segments(
        vm_->map_names(), interp_, ibias,
        paths_.guest_view(realpath(interp_.path.c_str(), real) != nullptr ? real : interp_.path));
    if (obs_) obs_->object_loaded(interp_.path, ibias);
    start = ii.entry;
    interp_base = ibias;
    interp_.data = {};  // loaded: the file's bytes are no longer needed
  }

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
  si.platform = id_.guest64 ? "x86_64" : "i686";
  GuestRandom at_random(opts_.seed, GuestRandom::kAtRandomSalt);
  for (size_t i = 0; i < 16; i += 8) {
    const uint64_t r = at_random.next();
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
      {AT_BASE, interp_base},
      {AT_FLAGS, 0},
      {AT_ENTRY, img.entry},
      {AT_UID, getuid()},
      {AT_EUID, geteuid()},
      {AT_GID, getgid()},
      {AT_EGID, getegid()},
      {AT_SECURE, 0},
      {AT_HWCAP2, 0},
  };
  const StackLayout sl = build_initial_stack(*mem_, l.stack_top, kStackSize / 2, id_.guest64, si);
  // /proc/self/auxv reads back these words, up to and including AT_NULL.
  const uint64_t word = id_.guest64 ? 8 : 4;
  for (uint64_t at = sl.auxv;; at += 2 * word) {
    bool ok = false;
    const uint64_t type = user_.get_word(at, ok);
    id_.auxv.append(reinterpret_cast<const char*>(mem_->host(at)), 2 * word);
    if (!ok || type == AT_NULL) break;
  }

  cpu_->boot(l.system_page);
  cpu_->start_user(start, sl.sp);
}

void Process::install_hooks() {
  uc_engine* uc = cpu_->uc();
  if (const char* why = Trampolines::install_trap_hooks(uc, &hooks_)) {
    throw LoadError(std::string("unicorn: ") + why);
  }
  set_rep_loop(true);
  // Port I/O reaches these hooks only when an IN/OUT-family instruction runs: no cost
  // elsewhere. Unicorn's I/O permission check lets CPL 3 through; Linux's answer is #GP.
  uc_hook h;
  for (const auto& [cb, insn] :
       {std::pair{reinterpret_cast<void*>(Trampolines::port_in), UC_X86_INS_IN},
        std::pair{reinterpret_cast<void*>(Trampolines::port_out), UC_X86_INS_OUT}}) {
    const uc_err e = Trampolines::add(uc, &h, UC_HOOK_INSN, cb, &hooks_, insn);
    if (e != UC_ERR_OK) throw LoadError(std::string("unicorn: hook: ") + uc_strerror(e));
  }
  // The chip check sees each block when it is translated (block_cost).
  if (opts_.timing || opts_.icount || chip_ || (obs_ && obs_->wants_blocks())) enable_block_hook();
  if (opts_.timing && opts_.cache_x86) {
    auto hook_mem =
        +[](uc_engine* uc, uc_mem_type type, uint64_t address, int size, int64_t, void* o) {
          Trampolines::guarded(uc, o, 0, [=](Hooks* w) {
            return w->on_mem_access(address, size, type == UC_MEM_WRITE), 0;
          });
        };
    if (uc_hook_add(uc, &mem_hook_, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
                    reinterpret_cast<void*>(hook_mem), &hooks_, 1, 0) != UC_ERR_OK) {
      throw LoadError("unicorn: cannot install the memory hook (--cache-x86)");
    }
  }
}

void Process::enable_block_hook() {
  if (block_hook_on_) return;
  uc_engine* uc = cpu_->uc();
  // Unless instructions are counted (--icount, --stats), block costs are added by
  // generated code (our Unicorn patch, UC_CTL_BLOCK_COST) and the hook runs only for the
  // blocks that need it (block_cost) or once an event is due. With --timing off nothing
  // is added and no event is due: the hook runs only for blocks that clear EFLAGS[30].
  // The profiler gets every block from the block log (UC_CTL_BLOCK_LOG), replayed in
  // batches (replay_block_log).
  bool inline_costs = !opts_.icount && !opts_.stats && !(obs_ && obs_->wants_every_block());
  if (!inline_costs && chip_) {
    // Counted instructions need the hook on every block; block_cost still sees each block
    // at translation, for the chip check, and asks for the hook on all of them.
    hook_every_block_ =
        uc_ctl_block_cost(uc, nullptr, nullptr, &Trampolines::block_cost, &hooks_) == UC_ERR_OK;
  }
  if (inline_costs) {
    inline_costs =
        uc_ctl_block_cost(uc, opts_.timing ? vt_->clock_cell() : nullptr, vt_->next_event_cell(),
                          &Trampolines::block_cost, &hooks_) == UC_ERR_OK;
    // --mix alone: generated code counts each block's executions in the mix's counter
    // (block_cost sets it as the tag), with nothing to replay.
    if (inline_costs && obs_ && obs_->block_counter() != nullptr &&
        uc_ctl_block_count(uc, 1) == UC_ERR_OK) {
      block_counter_ = obs_->block_counter();
    } else if (inline_costs && obs_ && obs_->wants_blocks()) {
      block_log_.assign(kBlockLogEntries, 0);
      log_blocks_.assign(1, nullptr);  // index 0: no block (BlockInfo::log_index)
      log_cursor_ = block_log_.data();
      log_end_ = log_cursor_ + block_log_.size();
      if (uc_ctl_block_log(uc, &log_cursor_, &log_end_) != UC_ERR_OK) {
        uc_ctl_block_cost(uc, nullptr, nullptr, nullptr, nullptr);
        inline_costs = false;
      }
    }
  }
  void* cb = inline_costs ? reinterpret_cast<void*>(Trampolines::costed_block)
                          : reinterpret_cast<void*>(Trampolines::block);
  if (uc_hook_add(uc, &block_hook_, UC_HOOK_BLOCK, cb, &hooks_, 1, 0) != UC_ERR_OK) {
    if (inline_costs) uc_ctl_block_cost(uc, nullptr, nullptr, nullptr, nullptr);
    return;
  }
  // §3.3: a block that only waits for ACE (SSE) needs the hook only while ACE is busy;
  // generated code compares its start with the SSE-ready cell (block_cost).
  wait_ready_ = inline_costs && opts_.timing &&
                uc_ctl_block_cost_ready(uc, vt_->sse_ready_cell()) == UC_ERR_OK;
  // Blocks translated before the hook existed have no call to it.
  uc_ctl_flush_tb(uc);
  block_hook_on_ = true;
  want_block_hook_ = false;
}

void Process::on_block(uint64_t address, uint32_t size) {
  const BlockCache::Slot& b = blocks_->slot(address, size);
  if (obs_) obs_->on_block(*b.info, vt_->now());  // before this block is charged (profiler.hpp)
  stats_.guest_insns += b.insns;
  if (opts_.timing) {
    // §3.3: an SSE instruction waits for ACE; integer, MMX and x87 code does not.
    if (b.flags & BlockCache::kSlotSse) vt_->wait_for_sse();
    vt_->advance(b.cost);
    stats_.x86_cycles += b.cost;
    if (b.flags & BlockCache::kSlotRep) charge_rep_string(*b.info);
    if (vt_->now() >= vt_->next_event()) time_events();
    if (b.flags & BlockCache::kSlotRep) rep_.mark = vt_->now();
  } else {
    vt_->advance(b.insns);  // --icount without timing: one cycle per instruction
  }
  // §1.8, §3.2: PUSHF stores EFLAGS, which clears EFLAGS[30]; POPF and IRET load it and
  // cannot set it (§1.8 step 3: the load leaves it 0). No PadLock instruction can precede
  // them inside one block (PadLock instructions end blocks), so clearing at block entry
  // is exact.
  if (b.flags & BlockCache::kSlotClears30) clear_eflags30();
}

// What a block adds to the clock per execution: its cycles, or with --timing off its
// instruction count (as on_block does; with inline costs only the block log's replay
// adds it, since generated code adds nothing then).
static uint32_t inline_cost(const BlockInfo& b, bool timing) {
  const uint32_t c = timing ? b.cost : b.insns;
  return c < UC_BLOCK_COST_WAIT_READY ? c : UC_BLOCK_COST_WAIT_READY - 1;
}

uint32_t Process::block_cost(uint64_t address, uint32_t size, uint64_t* tag) {
  const BlockCache::Slot& b = blocks_->slot(address, size);
  if (b.info->missing != nullptr) check_chip(*b.info);
  if (hook_every_block_) return UC_BLOCK_COST_ALWAYS_HOOK;
  if (block_counter_ != nullptr) {
    *tag = reinterpret_cast<uintptr_t>(block_counter_->counter(*b.info));
  } else if (log_cursor_ != nullptr) {
    // The block log's entry (replay_block_log; block_log::entry).
    if (b.info->log_index == 0) {
      b.info->log_index = static_cast<uint32_t>(log_blocks_.size());
      log_blocks_.push_back(b.info);
    }
    *tag = block_log::entry(inline_cost(*b.info, opts_.timing), *b.info);
  }
  // REP string charges and EFLAGS[30] clears need the hook on every execution
  // (on_costed_block); an SSE wait only while ACE is busy, which generated code tests
  // when it can (wait_ready_), the hook otherwise.
  const uint32_t c = inline_cost(*b.info, opts_.timing);
  const uint8_t hooked = opts_.timing ? b.flags : (b.flags & BlockCache::kSlotClears30);
  if (hooked == BlockCache::kSlotSse && wait_ready_) return c | UC_BLOCK_COST_WAIT_READY;
  return c | (hooked != 0 ? UC_BLOCK_COST_ALWAYS_HOOK : 0);
}

// Every block since the last replay, in order. No clock change happens between them
// except their own costs (every other change is made by a hook that replays first), so
// with timing their start times follow back from now (the last one's cost was added
// last); with --timing off the replay adds their instruction counts itself. Each block is
// given to the observers with the clock before its cost, as on_block does.
void Process::replay_block_log() {
  const uint64_t* const begin = block_log_.data();
  const uint64_t* const end = log_cursor_;
  uint64_t total = 0;
  // The costs' sum: the clock with --timing off, the first block's time for the profiler.
  if (!opts_.timing || obs_->wants_block_times()) {
    for (const uint64_t* p = begin; p != end; ++p) total += *p >> 32;
  }
  if (opts_.timing) {
    obs_->on_block_log(begin, end, log_blocks_.data(), log_blocks_.size(), vt_->now() - total);
  } else {
    obs_->on_block_log(begin, end, log_blocks_.data(), log_blocks_.size(), vt_->now());
    vt_->advance(total);
  }
  log_cursor_ = block_log_.data();
}

// The same rules as on_block, with the block's cost already added by generated code.
void Process::on_costed_block(uint64_t address, uint32_t size) {
  drain_block_log();
  const BlockCache::Slot& b = blocks_->slot(address, size);
  if (opts_.timing) {
    if (b.flags & BlockCache::kSlotSse) {
      // §3.3: the block could not issue before ACE was free.
      const uint64_t issued = vt_->now() - b.cost;
      if (vt_->sse_ready() > issued) vt_->advance_to(vt_->sse_ready() + b.cost);
    }
    if (b.flags & BlockCache::kSlotRep) charge_rep_string(*b.info);
    if (vt_->now() >= vt_->next_event()) time_events();
    if (b.flags & BlockCache::kSlotRep) rep_.mark = vt_->now();
  }
  if (b.flags & BlockCache::kSlotClears30) clear_eflags30();
}

// QEMU runs a REP string instruction one iteration per execution of a block that starts
// at it and holds it alone (cost 0), then once more to find the count 0; the first
// iteration runs in the block before it when the instruction is not first in its block.
// Hooked on every such execution (block_cost), this charges start-up + elements x
// per-element (timing::RepStringCost, rounded once) as the elements are processed:
// a block starting at the instruction with a non-zero count processes one element, and a
// block of the instruction that follows the previous one at once (the clock unchanged
// since) continues the same execution rather than starting a new one.
void Process::charge_rep_string(const BlockInfo& b) {
  const BlockInfo::RepString& r = b.rep;
  const bool continues = rep_.pc == r.pc && rep_.mark == vt_->now();
  if (!r.at_start) {
    // The instruction starts here, after the rest of this block; whether it runs an
    // iteration here (count not 0) shows when its own block follows at once.
    rep_ = RepRun{r.pc, 0, 0, 0, 0, true};
  } else if (continues && !rep_.pending_first) {
    // The previous iteration took one from the count (at 0 it would have left): no need
    // to read the register again.
    rep_.count = rep_.count - 1;
    if (rep_.count != 0) ++rep_.elements;
  } else {
    if (!continues) rep_ = RepRun{r.pc, 0, 0, 0, 0, false};
    if (rep_.pending_first) {
      ++rep_.elements;
      rep_.pending_first = false;
    }
    const uint64_t mask = r.count_bits >= 64 ? ~0ull : (1ull << r.count_bits) - 1;
    rep_.count = cpu_->reg(id_.guest64 ? UC_X86_REG_RCX : UC_X86_REG_ECX) & mask;
    if (rep_.count != 0) ++rep_.elements;
    // ESI and EDI move by whole elements, so any iteration shows the alignment of all.
    if (r.cost.misaligned > 0) {
      rep_.misaligned =
          r.cost.is_misaligned(cpu_->reg(id_.guest64 ? UC_X86_REG_RSI : UC_X86_REG_ESI),
                               cpu_->reg(id_.guest64 ? UC_X86_REG_RDI : UC_X86_REG_EDI));
    }
  }
  const uint64_t total = r.cost.clocks(rep_.elements, rep_.misaligned ? rep_.elements : 0);
  if (total > rep_.charged) {
    vt_->advance(total - rep_.charged);
    stats_.x86_cycles += total - rep_.charged;
    rep_.charged = total;
  }
}

void Process::set_rep_loop(bool on) {
  if (uc_ctl_rep_string(cpu_->uc(), on ? &Trampolines::rep_string : nullptr, &hooks_) ==
      UC_ERR_OK) {
    blocks_->set_whole_reps(on);
  }
}

// The same clocks as charge_rep_string gives an execution that is not interrupted
// (docs/timing.md, "REP string instructions"), charged before the loop: a fault in the
// loop, or stores into the instruction's own translated code, start the instruction again,
// and it is charged again for what is left.
void Process::on_rep_string(uint64_t pc, uint64_t count, uint64_t rsi, uint64_t rdi) {
  if (!opts_.timing) return;  // --timing off: the instruction counts as one, like any other
  drain_block_log();
  const timing::RepStringCost* cost = blocks_->rep_cost(pc);
  if (cost == nullptr) return;  // its block was decoded at translation: cannot happen
  const bool misaligned = cost->misaligned > 0 && cost->is_misaligned(rsi, rdi);
  const uint64_t clocks = cost->clocks(count, misaligned ? count : 0);
  vt_->advance(clocks);
  stats_.x86_cycles += clocks;
  if (vt_->now() >= vt_->next_event()) time_events();
}

void Process::on_mem_access(uint64_t address, int size, bool write) {
  drain_block_log();  // the stall belongs after the blocks logged so far
  timing::CacheModel* cache = core_->cache();
  if (cache == nullptr) return;  // --timing off: no memory model
  const double c = cache->access(address, static_cast<uint64_t>(size), write);
  if (c > 0) {
    const uint64_t n = static_cast<uint64_t>(c + 0.5);
    vt_->advance(n);
    stats_.cache_cycles += n;
  }
}

// An interrupt stores EFLAGS, which clears EFLAGS[30] (§1.8); its handler's cost is
// charged by VirtualTime. A due timer queues its signal (SIGALRM for ITIMER_REAL/alarm).
void Process::time_events() {
  const unsigned irqs = vt_->take_irqs();
  if (irqs > 0) {
    clear_eflags30();
    stats_.interrupts += irqs;
  }
  // The running thread's time slice is over (threads/scheduler.hpp): switch at the next stop.
  if (vt_->now() >= vt_->slice_end()) sched_->end_slice();
  vt_->fire_due([&](int signo, int code, int) {
    GuestSiginfo si;
    si.signo = signo;
    si.code = code;
    queue_process_signal(si);
  });
}

bool Process::sleep_until(uint64_t cycle) {
  while (vt_->now() < cycle) {
    const uint64_t next = std::min(cycle, vt_->next_event());
    vt_->add_idle(next - vt_->now());
    vt_->advance_to(next);
    time_events();
    if (sig_.next_deliverable() != 0) return vt_->now() < cycle;
  }
  return false;
}

void Process::stop_emulation(bool keep_pending) {
  if (keep_pending) uc_emu_stop_pending(cpu_->uc(), true);
  uc_emu_stop(cpu_->uc());
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

// --- VmHost: the CPU and the observers follow the address space ------------------------------

void Process::drop_code(uint64_t va, uint64_t len) {
  // Unicorn finds the start of the range through a code TLB fill, which must not fault
  // (it would stop the emulation); the TLB is flushed right after.
  tlb_.grant_all = true;
  uc_ctl_remove_cache(cpu_->uc(), va, va + len);
  tlb_.grant_all = false;
  mem_->unprotect_code(va, len);  // (its code is gone)
  uc_ctl_flush_tlb(cpu_->uc());
  blocks_->invalidate(va, len);
}

void Process::memory_changed(uint64_t, uint64_t) {
  uc_ctl_flush_tlb(cpu_->uc());
}

void Process::file_mapped(int fd, uint64_t va, uint64_t offset) {
  if (obs_) obs_->file_mapped(fd, va, offset);
}

void Process::unmapped(uint64_t va, uint64_t len) {
  if (obs_) obs_->unmapped(va, len);
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
  // --sandbox: a guest that starts outside its directory starts in it.
  char cwd[PATH_MAX];
  if (sandbox_.active() && (getcwd(cwd, sizeof cwd) == nullptr || !sandbox_.contains(cwd)) &&
      chdir(sandbox_.dir().c_str()) != 0) {
    throw LoadError("--sandbox '" + sandbox_.dir() + "': " + std::strerror(errno));
  }
  host_signals_init(*this);
  if (gdb_) gdb_->attach();
  // Not under gdb: the guest's pauses there are the user's.
  std::optional<ProgressLine> progress;
  progress.emplace(opts_, stats_, vt_->clock_cell(), mhz_, opts_.progress && !gdb_);
  // Taken last, so that the gdb connection and the signal and progress machinery are in.
  files_.host_fds = open_descriptors(true);
  // The guest's name in /proc/self/comm, stat and status, as exec gives it (the file's
  // name, 15 bytes at most), not the emulator's.
  const std::string base = opts_.program.substr(opts_.program.rfind('/') + 1);
  prctl(PR_SET_NAME, base.substr(0, 15).c_str(), 0, 0, 0);
  // --sandbox: nothing executed from here on gains privileges (docs/reliability.md,
  // "Threat model").
  if (sandbox_.active()) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  // --max-time: a watchdog thread sets a flag at the deadline and stops Unicorn; the
  // models see the flag inside a long REP (ExecEnv::host_stop).
  if (opts_.max_time > 0) host_stop_.start_deadline(opts_.max_time);
  bool out_of_time = false;
  while (!exited_ && !fatal_) {
    collect_host_signals(*this);
    sched_->schedule();  // threads: a new one, a switch (threads/scheduler.hpp)
    deliver_pending();
    // A system call that failed with EINTR is restarted (SA_RESTART) only by the signal
    // that interrupted it, delivered just now; after that it is a plain failure.
    last_syscall_eintr_ = false;
    if (exited_ || fatal_) break;
    if (host_stop_.killed()) {
      GuestSiginfo si;
      si.signo = SIGKILL;
      si.code = kSiUser;
      die(SIGKILL, si);
      break;
    }
    for (const auto& [va, size] : retranslate_) uc_ctl_remove_cache(cpu_->uc(), va, va + size);
    retranslate_.clear();
    if (recount_blocks_) {
      uc_ctl_flush_tb(cpu_->uc());
      recount_blocks_ = false;
    }
    tlb_.faulted = false;
    fault_pending_ = false;
    stop_requested_ = false;
    sigreturn_ = SigreturnKind::None;
    if (host_stop_.out_of_time()) {
      out_of_time = true;
      break;
    }
    host_signals_running(true);
    const uc_err err = uc_emu_start(cpu_->uc(), cpu_->pc(), 0, 0, 0);
    host_signals_running(false);
    try {
      hook_exception_.rethrow();
    } catch (...) {
      host_signals_restore();
      g_current = nullptr;
      throw;
    }
    drain_block_log();
    if (host_stop_.killed()) continue;  // stopped by HostStop::kill: the guest dies above
    if (host_stop_.out_of_time()) {
      out_of_time = true;  // the watchdog stopped it; a cut REP's state no longer matters
      break;
    }
    handle_stop(err);
    if (gdb_) gdb_->after_stop();
  }
  host_stop_.cancel_deadline();
  progress.reset();  // erased before the last messages
  host_signals_restore();
  stats_.blocks_decoded = blocks_->decoded();
  if (exited_) {
    result_ = RunResult{};
    result_.exit_code = exit_code_;
    // ld.so's status when a library is missing: the host's i386 libraries are seldom the
    // ones a program needs (docs/emulator.md, "Dynamically linked programs").
    constexpr int kLdSoMissingLibrary = 127;
    if (exit_code_ == kLdSoMissingLibrary && !id_.guest64 && !elf_.interp.empty() &&
        paths_.sysroot().empty()) {
      std::fprintf(opts_.log,
                   "padlock-emu: hint: an i386 dynamic program ended with status 127 without "
                   "-L: if its ld.so found no library, give an i386 sysroot with -L DIR "
                   "(scripts/make-sysroot.sh builds one)\n");
    }
  } else if (out_of_time) {
    // As timeout(1): status 124, and one line that says why.
    std::fprintf(opts_.log, "padlock-emu: --max-time %g s reached: the guest was stopped\n",
                 opts_.max_time);
    result_ = RunResult{};
    result_.exit_code = 124;
  }
  if (gdb_) gdb_->finished(result_);
  if (obs_) {
    obs_->finish(vt_->now(), result_);
    result_.check_error = obs_->check_failed();
  }
  if (opts_.stats) {
    stats_.print(opts_.log, mhz_);
    // How generated code reached guest memory (--memory, PADLOCK_EMU_MEMORY).
    std::fprintf(opts_.log, "padlock-emu: stats: guest memory %s\n",
                 direct_memory_ ? "direct" : "tlb");
    if (opts_.timing) {
      stats_.print_timing(opts_.log, mhz_, vt_->now(), vt_->idle_cycles(), vt_->irq_cycles_total());
    }
  }
  g_current = nullptr;
  // A forked child's guest has ended: so does the child, whoever embeds the emulator (the
  // Python module must not go on in two processes).
  if (forked_child_) end_like_guest(result_);
  return result_;
}

void end_like_guest(const RunResult& r) {
  std::fflush(nullptr);
  if (!r.signaled) _exit(r.exit_code);
  struct rlimit none = {0, 0};
  setrlimit(RLIMIT_CORE, &none);
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(r.signal, &sa, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, r.signal);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(r.signal);
  _exit(128 + r.signal);  // the signal's default action does not terminate (cannot happen)
}

}  // namespace padlock::emu
