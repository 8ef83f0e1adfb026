#include "emulator/loader/elf_loader.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>

#include "emulator/memory/address_text.hpp"

namespace padlock::emu {

namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;
uint64_t page_down(uint64_t v) {
  return v & ~(kPage - 1);
}
uint64_t page_up(uint64_t v) {
  return (v + kPage - 1) & ~(kPage - 1);
}

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw LoadError(path + ": " + why);
}

}  // namespace

const char* elf_machine_name(uint16_t machine) {
  switch (machine) {
    case EM_386:
      return "i386";
    case EM_X86_64:
      return "x86-64";
    case EM_ARM:
      return "ARM";
    case EM_AARCH64:
      return "AArch64";
    case EM_MIPS:
      return "MIPS";
    case EM_PPC:
      return "PowerPC";
    case EM_PPC64:
      return "PowerPC64";
    case EM_RISCV:
      return "RISC-V";
    case EM_S390:
      return "s390";
    case EM_SPARC:
      return "SPARC";
    case EM_IA_64:
      return "IA-64";
    default:
      return "an unknown machine";
  }
}

const char* program_header_table_error(bool is64, uint16_t phentsize, uint16_t phnum) {
  const uint64_t entry = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  if (phnum == 0) return "no program headers";
  if (phentsize != entry) return "bad e_phentsize (not the size of a program header)";
  if (entry * phnum > 65536) return "program header table over 64 KiB (Linux's limit)";
  return nullptr;
}

ElfFile ElfFile::read(const std::string& path) {
  return parse(path, read_file_bytes(path));
}

ElfFile ElfFile::parse(std::string path, std::vector<uint8_t> data) {
  ElfFile f;
  f.path = std::move(path);
  f.data = std::move(data);
  const ElfView v(f.path, f.data);
  f.is64 = v.is64;
  f.type = v.type;
  f.machine = v.machine;
  f.entry = v.entry;
  f.phoff = v.phoff;
  f.phnum = v.phnum;
  f.phentsize = v.phentsize;
  const uint16_t want = f.is64 ? EM_X86_64 : EM_386;
  if (f.machine != want) {
    if (f.machine == EM_386 || f.machine == EM_X86_64) {
      fail(f.path, std::string("ELF class does not match its machine (") +
                       elf_machine_name(f.machine) + " in a " + (f.is64 ? "64" : "32") +
                       "-bit file)");
    }
    fail(f.path, std::string("wrong machine: this program is for ") + elf_machine_name(f.machine) +
                     " (e_machine " + std::to_string(f.machine) +
                     "); padlock-emu runs i386 and x86-64 programs");
  }
  if (f.type != ET_EXEC && f.type != ET_DYN) {
    fail(f.path, f.type == ET_REL ? "an object file (ET_REL), not an executable"
                 : f.type == ET_CORE
                     ? "a core dump, not an executable"
                     : "not an executable (ELF type " + std::to_string(f.type) + ")");
  }
  if (const char* why = program_header_table_error(f.is64, f.phentsize, f.phnum)) {
    fail(f.path, why);
  }
  if (!v.contains(f.phoff, uint64_t(f.phnum) * f.phentsize)) {
    fail(f.path, "truncated ELF file (program headers past the end)");
  }
  bool any_load = false;
  f.min_vaddr = UINT64_MAX;
  for (size_t i = 0; i < f.phnum; ++i) {
    const ElfSegment h = v.program_header(i);
    if (h.type == PT_LOAD) {
      if (h.filesz > h.memsz) fail(f.path, "bad PT_LOAD segment (file size > memory size)");
      if (!v.contains(h.offset, h.filesz)) {
        fail(f.path, "truncated ELF file (segment data past the end)");
      }
      if (h.vaddr + h.memsz < h.vaddr || page_up(h.vaddr + h.memsz) < h.vaddr) {
        fail(f.path, "bad PT_LOAD segment (wraps)");
      }
      // Linux maps file offset p_offset - (p_vaddr mod page) at the page of p_vaddr; the
      // mmap fails (EINVAL) unless that offset is page aligned.
      if (h.filesz != 0 && ((h.vaddr - h.offset) & (kPage - 1)) != 0) {
        fail(f.path, "bad PT_LOAD segment (p_offset " + hex(h.offset) + " and p_vaddr " +
                         hex(h.vaddr) + " differ modulo the page size)");
      }
      any_load = true;
      f.min_vaddr = std::min(f.min_vaddr, page_down(h.vaddr));
      f.max_vaddr = std::max(f.max_vaddr, page_up(h.vaddr + h.memsz));
      // Linux's maximum_alignment: only powers of two count.
      if ((h.align & (h.align - 1)) == 0) f.max_align = std::max(f.max_align, h.align);
    } else if (h.type == PT_INTERP) {
      // Linux's load_elf_binary: ENOEXEC unless 2 <= p_filesz <= PATH_MAX and the path
      // ends in its NUL.
      if (h.filesz < 2 || h.filesz > 4096) fail(f.path, "bad PT_INTERP (size)");
      const char* s = reinterpret_cast<const char*>(v.bytes(h.offset, h.filesz, "PT_INTERP"));
      if (s[h.filesz - 1] != '\0') fail(f.path, "bad PT_INTERP (not NUL-terminated)");
      f.interp.assign(s, strnlen(s, h.filesz));
    } else if (h.type == PT_GNU_STACK) {
      f.has_gnu_stack = true;
      f.exec_stack = (h.flags & PF_X) != 0;
    }
  }
  if (!any_load) fail(f.path, "no loadable segments");
  return f;
}

LoadedImage load_elf(const ElfFile& elf, AddressSpace& mem, uint64_t bias, bool read_implies_exec,
                     bool must_be_free) {
  LoadedImage img;
  img.bias = bias;
  img.entry = elf.entry + bias;
  img.phnum = elf.phnum;
  img.phent = elf.phentsize;
  struct Seg {
    uint64_t start, end;
    uint8_t prot;
  };
  std::vector<Seg> segs;
  const ElfView v(elf.path, elf.data);
  // Every check before the first page is mapped, as Linux's load_elf_binary decides
  // before its point of no return: the whole span fits, and (for a second image, the
  // interpreter) takes no page that is already mapped (MAP_FIXED_NOREPLACE).
  for (size_t i = 0; i < elf.phnum; ++i) {
    const ElfSegment h = v.program_header(i);
    if (h.type != PT_LOAD || h.memsz == 0) continue;
    const uint64_t va = h.vaddr + bias;
    if (!mem.in_window(va, h.memsz)) {
      throw LoadError(elf.path + ": segment at " + hex(va) +
                      " lies outside the emulated address space");
    }
    const uint64_t start = page_down(va), end = page_up(va + h.memsz);
    if (must_be_free && !mem.range_free(start, end - start)) {
      throw LoadError(elf.path + ": segment at " + hex(va) +
                      " overlaps memory already mapped (by the program)");
    }
  }
  for (size_t i = 0; i < elf.phnum; ++i) {
    const ElfSegment h = v.program_header(i);
    if (h.type == PT_PHDR) img.phdr = h.vaddr + bias;
    if (h.type != PT_LOAD || h.memsz == 0) continue;
    const uint64_t va = h.vaddr + bias;
    const uint64_t start = page_down(va), end = page_up(va + h.memsz);
    // Fresh pages come zero-filled from the host, mapped lazily by runs (a bss of
    // gigabytes costs nothing until touched). A page shared with an earlier segment keeps
    // its contents, except that the bss part of it is zeroed. The bss's whole pages are
    // fresh zero pages even where an earlier segment mapped them (Linux maps the bss
    // anonymous over what was there): cleared by hand, a bss of gigabytes over an earlier
    // segment touched every page (found by the elf_loader fuzz target).
    const uint64_t bss = va + h.filesz, bss_end = va + h.memsz;
    const uint64_t zero_start = std::max(start, page_up(bss)), zero_end = page_down(bss_end);
    if (zero_start < zero_end &&
        !mem.map_anonymous(zero_start, zero_end - zero_start, kPageRead | kPageWrite)) {
      throw LoadError(elf.path + ": cannot map segment memory");
    }
    for (uint64_t p = start; p < end;) {
      if (p == zero_start && zero_start < zero_end) {
        p = zero_end;
        continue;
      }
      if (mem.flags(p) & kPageMapped) {
        const uint64_t from = std::max(p, bss), to = std::min(p + kPage, bss_end);
        if (from < to) std::memset(mem.host(from), 0, to - from);
        p += kPage;
        continue;
      }
      const uint64_t q = mem.next_mapped(p + kPage, end);
      if (!mem.map_anonymous(p, q - p, kPageRead | kPageWrite)) {
        throw LoadError(elf.path + ": cannot map segment memory");
      }
      p = q;
    }
    mem.poke(va, elf.data.data() + h.offset, h.filesz);
    uint8_t prot = 0;
    if (h.flags & PF_R) prot |= kPageRead | (read_implies_exec ? kPageExec : 0);
    if (h.flags & PF_W) prot |= kPageRead | kPageWrite;
    if (h.flags & PF_X) prot |= kPageRead | kPageExec;
    segs.push_back({start, end, prot});
    // AT_PHDR without PT_PHDR: the headers inside the segment that maps file offset phoff.
    if (img.phdr == 0 && elf.phoff >= h.offset && elf.phoff < h.offset + h.filesz) {
      img.phdr = va + (elf.phoff - h.offset);
    }
    img.end = std::max(img.end, end);
  }
  // Each page gets the union of the permissions of the segments that cover it, applied by
  // runs between segment edges (page by page, a bss of gigabytes took seconds).
  std::vector<uint64_t> edges;
  for (const Seg& s : segs) edges.insert(edges.end(), {s.start, s.end});
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  for (size_t k = 0; k + 1 < edges.size(); ++k) {
    const uint64_t lo = edges[k], hi = edges[k + 1];
    uint8_t prot = 0;
    bool covered = false;
    for (const Seg& s : segs) {
      if (s.start <= lo && hi <= s.end) {
        prot |= s.prot;
        covered = true;
      }
    }
    if (covered) mem.protect(lo, hi - lo, prot);
  }
  return img;
}

}  // namespace padlock::emu
