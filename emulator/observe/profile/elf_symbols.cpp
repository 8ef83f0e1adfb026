#include "emulator/observe/profile/elf_symbols.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

namespace padlock::emu::profile {

namespace {

// Class-neutral views of the headers we need.
struct Shdr {
  uint32_t type = 0, link = 0;
  uint64_t addr = 0, offset = 0, size = 0, entsize = 0;
};
struct Sym {
  uint32_t name = 0;
  uint8_t info = 0;
  uint16_t shndx = 0;
  uint64_t value = 0, size = 0;
};

template <typename T>
bool load(const uint8_t* data, size_t size, uint64_t off, T& out) {
  if (off > size || size - off < sizeof(T)) return false;
  std::memcpy(&out, data + off, sizeof(T));
  return true;
}

int binding_rank(uint8_t bind) {
  return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}
size_t leading_underscores(const std::string& s) {
  size_t n = 0;
  while (n < s.size() && s[n] == '_') ++n;
  return n;
}

struct Candidate {
  FunctionSymbol sym;
  int rank;
  uint64_t section_end;  // a symbol without a size ends with its section at the latest
};

// Which of two names for one address to keep (see the header).
bool better(const Candidate& a, const Candidate& b) {
  if (a.rank != b.rank) return a.rank < b.rank;
  const size_t ua = leading_underscores(a.sym.name), ub = leading_underscores(b.sym.name);
  if (ua != ub) return ua < ub;
  if (a.sym.name.size() != b.sym.name.size()) return a.sym.name.size() < b.sym.name.size();
  return a.sym.name < b.sym.name;
}

}  // namespace

ElfSymbols parse_elf_symbols(const uint8_t* data, size_t size) {
  ElfSymbols out;
  if (size < EI_NIDENT || std::memcmp(data, ELFMAG, SELFMAG) != 0) return out;
  const bool is64 = data[EI_CLASS] == ELFCLASS64;
  if (!is64 && data[EI_CLASS] != ELFCLASS32) return out;
  out.is64 = is64;

  uint64_t shoff = 0, phoff = 0;
  uint16_t shnum = 0, shentsize = 0, phnum = 0, phentsize = 0;
  if (is64) {
    Elf64_Ehdr e;
    if (!load(data, size, 0, e)) return out;
    shoff = e.e_shoff, shnum = e.e_shnum, shentsize = e.e_shentsize;
    phoff = e.e_phoff, phnum = e.e_phnum, phentsize = e.e_phentsize;
  } else {
    Elf32_Ehdr e;
    if (!load(data, size, 0, e)) return out;
    shoff = e.e_shoff, shnum = e.e_shnum, shentsize = e.e_shentsize;
    phoff = e.e_phoff, phnum = e.e_phnum, phentsize = e.e_phentsize;
  }
  out.ok = true;

  for (uint16_t i = 0; i < phnum; ++i) {
    const uint64_t at = phoff + uint64_t{i} * phentsize;
    LoadSegment seg;
    uint32_t type = 0, flags = 0;
    if (is64) {
      Elf64_Phdr p;
      if (!load(data, size, at, p)) break;
      type = p.p_type, flags = p.p_flags;
      seg = {p.p_offset, p.p_vaddr, p.p_memsz, false};
    } else {
      Elf32_Phdr p;
      if (!load(data, size, at, p)) break;
      type = p.p_type, flags = p.p_flags;
      seg = {p.p_offset, p.p_vaddr, p.p_memsz, false};
    }
    if (type != PT_LOAD) continue;
    seg.exec = (flags & PF_X) != 0;
    out.segments.push_back(seg);
  }

  auto shdr_at = [&](uint64_t i, Shdr& s) {
    const uint64_t at = shoff + i * shentsize;
    if (is64) {
      Elf64_Shdr h;
      if (!load(data, size, at, h)) return false;
      s = {h.sh_type, h.sh_link, h.sh_addr, h.sh_offset, h.sh_size, h.sh_entsize};
    } else {
      Elf32_Shdr h;
      if (!load(data, size, at, h)) return false;
      s = {h.sh_type, h.sh_link, h.sh_addr, h.sh_offset, h.sh_size, h.sh_entsize};
    }
    return true;
  };
  // .symtab has every function; stripped files keep only .dynsym.
  Shdr symtab, strtab;
  bool found = false;
  for (uint32_t want : {uint32_t{SHT_SYMTAB}, uint32_t{SHT_DYNSYM}}) {
    for (uint64_t i = 0; i < shnum && !found; ++i) {
      Shdr s;
      if (shdr_at(i, s) && s.type == want && shdr_at(s.link, strtab)) {
        symtab = s;
        found = true;
      }
    }
    if (found) break;
  }
  if (!found || symtab.entsize == 0 || strtab.offset > size) return out;

  std::vector<Candidate> cands;
  const uint64_t count = std::min<uint64_t>(symtab.size, size) / symtab.entsize;
  for (uint64_t i = 1; i < count; ++i) {
    const uint64_t at = symtab.offset + i * symtab.entsize;
    Sym s;
    if (is64) {
      Elf64_Sym e;
      if (!load(data, size, at, e)) break;
      s = {e.st_name, e.st_info, e.st_shndx, e.st_value, e.st_size};
    } else {
      Elf32_Sym e;
      if (!load(data, size, at, e)) break;
      s = {e.st_name, e.st_info, e.st_shndx, e.st_value, e.st_size};
    }
    const unsigned type = s.info & 0xF;
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.shndx == SHN_UNDEF || s.value == 0) {
      continue;
    }
    const uint64_t name_at = strtab.offset + s.name;
    if (s.name >= strtab.size || name_at >= size) continue;
    const char* name = reinterpret_cast<const char*>(data + name_at);
    const size_t max = std::min<uint64_t>(strtab.size - s.name, size - name_at);
    const size_t len = strnlen(name, max);
    if (len == 0) continue;
    Shdr section;
    const uint64_t section_end =
        s.shndx < shnum && shdr_at(s.shndx, section) ? section.addr + section.size : UINT64_MAX;
    cands.push_back(
        {{s.value, s.size, std::string(name, len)}, binding_rank(s.info >> 4), section_end});
  }
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    if (a.sym.addr != b.sym.addr) return a.sym.addr < b.sym.addr;
    return better(a, b);
  });
  std::vector<uint64_t> ends;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (i > 0 && cands[i].sym.addr == cands[i - 1].sym.addr) {
      // An alias: keep the preferred name, and the largest size any alias gives.
      FunctionSymbol& kept = out.functions.back();
      kept.size = std::max(kept.size, cands[i].sym.size);
      continue;
    }
    out.functions.push_back(std::move(cands[i].sym));
    ends.push_back(cands[i].section_end);
  }
  // No size (assembly without .size): up to the next symbol, within its section.
  for (size_t i = 0; i < out.functions.size(); ++i) {
    FunctionSymbol& f = out.functions[i];
    if (f.size != 0) continue;
    uint64_t end = ends[i];
    if (i + 1 < out.functions.size()) end = std::min(end, out.functions[i + 1].addr);
    if (end != UINT64_MAX && end > f.addr) f.size = end - f.addr;
  }
  return out;
}

ElfSymbols read_elf_symbols(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_elf_symbols(bytes.data(), bytes.size());
}

}  // namespace padlock::emu::profile
