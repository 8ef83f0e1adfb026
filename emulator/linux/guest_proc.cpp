#include "emulator/linux/guest_proc.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "emulator/linux/process.hpp"
#include "emulator/loader/elf_view.hpp"

namespace padlock::emu {

void name_elf_segments(MapNames& names, const ElfFile& elf, uint64_t bias,
                       const std::string& guest_path) {
  constexpr uint64_t kPage = AddressSpace::kPageSize;
  struct stat st {};
  const bool have = stat(elf.path.c_str(), &st) == 0;
  const ElfView v(elf.path, elf.data);
  for (size_t i = 0; i < elf.phnum; ++i) {
    const ElfSegment h = v.program_header(i);
    if (h.type != PT_LOAD || h.filesz == 0) continue;
    const uint64_t start = (h.vaddr + bias) & ~(kPage - 1);
    const uint64_t end = (h.vaddr + bias + h.filesz + kPage - 1) & ~(kPage - 1);
    MapNames::Name n;
    n.path = guest_path;
    n.offset = h.offset & ~(kPage - 1);
    n.dev = have ? st.st_dev : 0;
    n.inode = have ? st.st_ino : 0;
    names.set(start, end - start, n);
  }
}

// --- /proc/cpuinfo ---------------------------------------------------------------------------

namespace {

// The flag names Linux prints, per CPUID register word, bit by bit (nullptr: none):
// arch/x86/include/asm/cpufeatures.h, words 0 (leaf 1 EDX), 1 (0x80000001 EDX, the bits
// that are not copies of leaf 1), 4 (leaf 1 ECX), 5 (0xC0000001 EDX: the PadLock units and
// their enables, §1.3) and 6 (0x80000001 ECX).
using FlagWord = const char* const[32];
constexpr FlagWord kWord0 = {"fpu",  "vme",   "de",    "pse",     "tsc",   "msr", "pae",  "mce",
                             "cx8",  "apic",  nullptr, "sep",     "mtrr",  "pge", "mca",  "cmov",
                             "pat",  "pse36", "pn",    "clflush", nullptr, "dts", "acpi", "mmx",
                             "fxsr", "sse",   "sse2",  "ss",      "ht",    "tm",  "ia64", "pbe"};
constexpr FlagWord kWord1 = {
    nullptr, nullptr,    nullptr,   nullptr,   nullptr, nullptr, nullptr,    nullptr,
    nullptr, nullptr,    nullptr,   "syscall", nullptr, nullptr, nullptr,    nullptr,
    nullptr, nullptr,    nullptr,   "mp",      "nx",    nullptr, "mmxext",   nullptr,
    nullptr, "fxsr_opt", "pdpe1gb", "rdtscp",  nullptr, "lm",    "3dnowext", "3dnow"};
constexpr FlagWord kWord4 = {"pni",
                             "pclmulqdq",
                             "dtes64",
                             "monitor",
                             "ds_cpl",
                             "vmx",
                             "smx",
                             "est",
                             "tm2",
                             "ssse3",
                             "cid",
                             "sdbg",
                             "fma",
                             "cx16",
                             "xtpr",
                             "pdcm",
                             nullptr,
                             "pcid",
                             "dca",
                             "sse4_1",
                             "sse4_2",
                             "x2apic",
                             "movbe",
                             "popcnt",
                             "tsc_deadline_timer",
                             "aes",
                             "xsave",
                             nullptr /* osxsave: not shown */,
                             "avx",
                             "f16c",
                             "rdrand",
                             "hypervisor"};
constexpr FlagWord kWord5 = {nullptr, nullptr,  "rng",   "rng_en",  nullptr, nullptr,
                             "ace",   "ace_en", "ace2",  "ace2_en", "phe",   "phe_en",
                             "pmm",   "pmm_en", nullptr, nullptr};
constexpr FlagWord kWord6 = {"lahf_lm", "cmp_legacy", "svm",         "extapic",       "cr8_legacy",
                             "abm",     "sse4a",      "misalignsse", "3dnowprefetch", "osvw",
                             "ibs",     "xop",        "skinit",      "wdt",           nullptr,
                             "lwp",     "fma4",       "tce",         nullptr,         "nodeid_msr",
                             nullptr,   "tbm",        "topoext",     "perfctr_core",  "perfctr_nb",
                             nullptr,   "bpext",      "ptsc",        "perfctr_llc",   "mwaitx"};

void add_flags(std::string& out, uint32_t bits, const FlagWord& names) {
  for (unsigned b = 0; b < 32; ++b) {
    if (((bits >> b) & 1u) && names[b] != nullptr) {
      out += ' ';
      out += names[b];
    }
  }
}

}  // namespace

// The layout of arch/x86/kernel/cpu/proc.c (show_cpuinfo): the lines of a 32-bit kernel
// (fdiv_bug ... coma_bug) on a chip without long mode, of a 64-bit one on Nano. Values the
// CPUID leaves do not give are Linux's defaults for a chip without them: 36 physical
// address bits with PAE (32 without), 32 virtual bits (48 in long mode); bogomips is two
// per MHz as Linux reports from the TSC calibration.
std::string cpuinfo_text(const CpuModel& model, const Padlock& padlock, double mhz) {
  const CpuidResult l0 = padlock.cpuid(0, 0), l1 = padlock.cpuid(1, 0);
  const CpuidResult e1 = padlock.cpuid(0x80000001, 0), l2 = padlock.cpuid(0x80000006, 0);
  const CpuidResult c1 = padlock.cpuid(0xC0000001, 0);
  char vendor[13] = {};
  std::memcpy(vendor, &l0.ebx, 4);
  std::memcpy(vendor + 4, &l0.edx, 4);
  std::memcpy(vendor + 8, &l0.ecx, 4);
  const bool lm = model.long_mode;
  // Linux strips the leading spaces of a right-justified brand string
  // (arch/x86/kernel/cpu/common.c, get_model_name).
  const char* name = model.brand;
  while (*name == ' ') ++name;
  std::string flags;
  add_flags(flags, l1.edx, kWord0);
  add_flags(flags, e1.edx, kWord1);
  add_flags(flags, l1.ecx, kWord4);
  add_flags(flags, c1.edx, kWord5);
  add_flags(flags, e1.ecx, kWord6);
  const unsigned clflush = ((l1.ebx >> 8) & 0xFF) * 8;
  const unsigned phys = (l1.edx & (1u << 6)) ? 36 : 32;
  char buf[2048];
  std::string out;
  std::snprintf(buf, sizeof buf,
                "processor\t: 0\nvendor_id\t: %s\ncpu family\t: %u\nmodel\t\t: %u\n"
                "model name\t: %s\nstepping\t: %u\ncpu MHz\t\t: %.3f\ncache size\t: %u KB\n",
                vendor, model.family, model.model, name, model.stepping, mhz, l2.ecx >> 16);
  out += buf;
  if (!lm) out += "fdiv_bug\t: no\nf00f_bug\t: no\ncoma_bug\t: no\n";
  std::snprintf(buf, sizeof buf,
                "fpu\t\t: %s\nfpu_exception\t: %s\ncpuid level\t: %u\nwp\t\t: yes\n",
                (l1.edx & 1u) ? "yes" : "no", (l1.edx & 1u) ? "yes" : "no", l0.eax);
  out += buf;
  out += "flags\t\t:" + flags + "\nbugs\t\t:\n";
  std::snprintf(buf, sizeof buf,
                "bogomips\t: %.2f\nclflush size\t: %u\ncache_alignment\t: %u\n"
                "address sizes\t: %u bits physical, %u bits virtual\npower management:\n\n",
                2 * mhz, clflush, clflush, phys, lm ? 48u : 32u);
  out += buf;
  return out;
}

// --- /proc/self/maps -------------------------------------------------------------------------

namespace {

// One line as fs/proc/task_mmu.c prints it (show_map_vma): the name starts in column 74
// on a 64-bit kernel.
void maps_line(std::string& out, uint64_t start, uint64_t end, uint8_t f, uint64_t offset,
               uint64_t dev, uint64_t inode, std::string_view name) {
  char buf[160];
  const int n =
      std::snprintf(buf, sizeof buf, "%08llx-%08llx %c%c%c%c %08llx %02x:%02x %llu ",
                    static_cast<unsigned long long>(start), static_cast<unsigned long long>(end),
                    (f & kPageRead) ? 'r' : '-', (f & kPageWrite) ? 'w' : '-',
                    (f & kPageExec) ? 'x' : '-', (f & kPageShared) ? 's' : 'p',
                    static_cast<unsigned long long>(offset), static_cast<unsigned>(major(dev)),
                    static_cast<unsigned>(minor(dev)), static_cast<unsigned long long>(inode));
  out.append(buf, static_cast<size_t>(n));
  if (!name.empty()) {
    if (n < 73) out.append(static_cast<size_t>(73 - n), ' ');
    out += name;
  }
  out += '\n';
}

std::string maps_text(Process& p) {
  const AddressSpace& mem = p.mem();
  const MemoryLayout& l = p.vm().layout();
  const uint64_t heap_end = (l.brk + AddressSpace::kPageSize - 1) & ~AddressSpace::kPageMask;
  const uint64_t stack_start = l.stack_top - l.stack_size;
  std::string out;
  uint64_t end = 0;
  uint8_t f = 0;
  // The guest's pages only: the emulator's GDT and boot stub above the user range
  // (docs/reliability.md) are no mapping of the guest's, as Linux lists nothing above
  // TASK_SIZE but the vsyscall page.
  for (uint64_t va = mem.next_run(0, &end, &f); va < l.system_page;
       va = mem.next_run(end, &end, &f)) {
    end = std::min(end, l.system_page);
    // Split the run where its name changes.
    for (uint64_t at = va; at < end;) {
      uint64_t offset = 0, until = 0;
      const MapNames::Name* n = p.vm().map_names().at(at, &offset, &until);
      std::string_view special;
      if (n == nullptr && at >= l.brk_start && at < heap_end) {
        special = "[heap]";
        until = std::min(until, heap_end);
      } else if (n == nullptr && at >= stack_start && at < l.stack_top) {
        special = "[stack]";
        until = std::min(until, l.stack_top);
      } else if (n == nullptr) {
        if (at < l.brk_start) until = std::min(until, l.brk_start);
        if (at < stack_start) until = std::min(until, stack_start);
      }
      const uint64_t stop = std::min(until, end);
      if (n != nullptr) {
        maps_line(out, at, stop, f, offset, n->dev, n->inode, n->path);
      } else {
        maps_line(out, at, stop, f, 0, 0, 0, special);
      }
      at = stop;
    }
  }
  return out;
}

// A read-only descriptor on `text`, as a /proc file is.
int generated_file(const std::string& text, int flags) {
  if ((flags & O_ACCMODE) != O_RDONLY) return -EACCES;
  if (flags & O_DIRECTORY) return -ENOTDIR;
  const int fd = memfd_create("padlock-emu-proc", MFD_CLOEXEC);
  if (fd < 0) return -errno;
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      close(fd);
      return -err;
    }
    done += static_cast<size_t>(n);
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  const int ro = open(path, O_RDONLY | (flags & O_CLOEXEC));
  const int err = errno;
  close(fd);
  return ro >= 0 ? ro : -err;
}

}  // namespace

namespace {

// argv or the environment as Linux's cmdline and environ give them: each string and its NUL.
std::string nul_separated(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) {
    out += s;
    out += '\0';
  }
  return out;
}

// The host's /proc/self/stat with the fields that are addresses in the emulator's own
// address space set to 0, as Linux's do_task_stat shows them to a reader without ptrace
// access: startcode, endcode, startstack, kstkesp, kstkeip (fields 26-30) and start_data
// ... env_end (45-51).
std::string stat_text() {
  std::string s;
  const int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return s;
  char buf[1024];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t comm_end = s.rfind(')');
  if (comm_end == std::string::npos) return s;
  std::string out = s.substr(0, comm_end + 1);
  int field = 2;
  for (size_t at = comm_end + 1; at < s.size();) {
    const size_t space = s.find_first_of(" \n", at + 1);
    const size_t end = space == std::string::npos ? s.size() : space;
    ++field;
    const bool address = (field >= 26 && field <= 30) || (field >= 45 && field <= 51);
    out += s[at];  // the separator
    out += address ? std::string("0") : s.substr(at + 1, end - at - 1);
    at = end;
    if (at < s.size() && s[at] == '\n') {
      out += '\n';
      break;
    }
  }
  return out;
}

}  // namespace

int open_generated(Process& p, ProcEntry e, int flags) {
  switch (e) {
    case ProcEntry::kCpuinfo:
      return generated_file(cpuinfo_text(*p.options().cpu, p.padlock(), p.vtime().mhz()), flags);
    case ProcEntry::kCpuList:
      // One CPU online, possible and present: what glibc's get_nprocs (sysconf
      // _SC_NPROCESSORS_ONLN) reads first.
      return generated_file("0\n", flags);
    case ProcEntry::kMaps:
      return generated_file(maps_text(p), flags);
    case ProcEntry::kAuxv:
      return generated_file(p.identity().auxv, flags);
    case ProcEntry::kCmdline:
      return generated_file(nul_separated(p.options().argv), flags);
    case ProcEntry::kEnviron:
      return generated_file(nul_separated(p.options().envp), flags);
    case ProcEntry::kStat:
      return generated_file(stat_text(), flags);
    default:
      return kNotGenerated;
  }
}

}  // namespace padlock::emu
