#include "emulator/observe/profile/elf_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "emulator/loader/elf_view.hpp"

namespace padlock::emu::profile {

namespace {

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

// The PT_LOAD program headers (those that can be read).
void read_segments(const ElfView& v, ElfSymbols& out) {
  try {
    for (size_t i = 0; i < v.phnum; ++i) {
      const ElfSegment p = v.program_header(i);
      if (p.type == PT_LOAD)
        out.segments.push_back({p.offset, p.vaddr, p.memsz, (p.flags & PF_X) != 0});
    }
  } catch (const LoadError&) {
  }
}

FileIdentity identity_of(const struct stat& st) {
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

}  // namespace

// A reader for what the profiler may meet, not a validator: whatever part of the file
// cannot be read (LoadError) leaves out what it holds, and no more.
ElfSymbols parse_elf_symbols(const uint8_t* data, size_t size) {
  ElfSymbols out;
  std::optional<ElfView> view;
  try {
    view.emplace("", data, size);
  } catch (const LoadError&) {
    return out;
  }
  const ElfView& v = *view;
  out.is64 = v.is64;
  out.ok = true;

  read_segments(v, out);

  std::vector<ElfSection> sections;
  try {
    sections = v.sections();
  } catch (const LoadError&) {
    return out;
  }
  // .symtab has every function; stripped files keep only .dynsym.
  const ElfSection* symtab = nullptr;
  for (uint32_t want : {uint32_t{SHT_SYMTAB}, uint32_t{SHT_DYNSYM}}) {
    for (const ElfSection& s : sections) {
      if (symtab == nullptr && s.type == want) symtab = &s;
    }
  }
  if (symtab == nullptr) return out;
  out.full_symtab = symtab->type == SHT_SYMTAB;

  std::vector<Candidate> cands;
  for (size_t i = 1; i < v.symbol_count(*symtab); ++i) {
    ElfSymbol s;
    try {
      s = v.symbol_entry(*symtab, i);
    } catch (const LoadError&) {
      break;  // the table runs past the end of the file
    }
    if ((s.type() != STT_FUNC && s.type() != STT_GNU_IFUNC) || s.shndx == SHN_UNDEF ||
        s.value == 0) {
      continue;
    }
    try {
      s.name = v.string_at(symtab->link, s.name_offset);
    } catch (const LoadError&) {
      continue;
    }
    if (s.name.empty()) continue;
    const uint64_t section_end =
        s.shndx < sections.size() ? sections[s.shndx].addr + sections[s.shndx].size : UINT64_MAX;
    cands.push_back({{s.value, s.size, std::move(s.name)}, binding_rank(s.bind()), section_end});
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
  try {
    const std::vector<uint8_t> bytes = read_file_bytes(path);
    return parse_elf_symbols(bytes.data(), bytes.size());
  } catch (const LoadError&) {
    return {};
  }
}

FileIdentity file_identity(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? identity_of(st) : FileIdentity{};
}

ElfSymbols read_elf_segments(const std::string& path, FileIdentity* identity) {
  ElfSymbols out;
  *identity = {};
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  struct stat st;
  // The headers of every ELF file the guest maps fit in its first page; a larger program
  // header table is read whole.
  std::vector<uint8_t> head(4096);
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    *identity = identity_of(st);
    for (int attempt = 0; attempt < 2; ++attempt) {
      const ssize_t n = pread(fd, head.data(), head.size(), 0);
      if (n <= 0) break;
      head.resize(static_cast<size_t>(n));
      try {
        const ElfView v("", head.data(), head.size());
        const uint64_t end = v.phoff + uint64_t(v.phnum) * v.phentsize;
        if (end > head.size() && head.size() < static_cast<uint64_t>(st.st_size) && attempt == 0) {
          head.resize(static_cast<size_t>(std::min<uint64_t>(end, st.st_size)));
          continue;
        }
        out.ok = true;
        out.is64 = v.is64;
        read_segments(v, out);
      } catch (const LoadError&) {
      }
      break;
    }
  }
  close(fd);
  return out;
}

}  // namespace padlock::emu::profile
