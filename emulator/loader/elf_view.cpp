#include "emulator/loader/elf_view.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace padlock::emu {

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw LoadError(path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    throw LoadError(path + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    throw LoadError(path + ": " +
                    (S_ISDIR(st.st_mode) ? std::strerror(EISDIR) : "not a regular file"));
  }
  std::vector<uint8_t> data(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  data.resize(got);
  return data;
}

ElfView::ElfView(std::string path, const uint8_t* data, size_t size)
    : path_(std::move(path)), data_(data), size_(size) {
  if (size < SELFMAG || std::memcmp(data, ELFMAG, SELFMAG) != 0) fail("not an ELF file");
  if (size < EI_NIDENT) fail("truncated ELF file (no ELF header)");
  if (data[EI_CLASS] != ELFCLASS32 && data[EI_CLASS] != ELFCLASS64) {
    fail("unsupported ELF class " + std::to_string(data[EI_CLASS]));
  }
  if (data[EI_DATA] != ELFDATA2LSB) fail("not a little-endian ELF file");
  is64 = data[EI_CLASS] == ELFCLASS64;
  if (size < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
    fail("truncated ELF file (ELF header cut short)");
  }
  auto header = [&](const auto& e) {
    type = e.e_type, machine = e.e_machine, entry = e.e_entry;
    phoff = e.e_phoff, phnum = e.e_phnum, phentsize = e.e_phentsize;
    shoff = e.e_shoff, shnum = e.e_shnum, shentsize = e.e_shentsize, shstrndx = e.e_shstrndx;
  };
  if (is64) {
    header(get<Elf64_Ehdr>(0, nullptr));
  } else {
    header(get<Elf32_Ehdr>(0, nullptr));
  }
}

void ElfView::fail(const std::string& why) const {
  throw LoadError(path_ + ": " + why);
}

template <typename T>
T ElfView::get(uint64_t off, const char* what) const {
  T v;
  std::memcpy(&v, bytes(off, sizeof v, what), sizeof v);
  return v;
}

const uint8_t* ElfView::bytes(uint64_t off, uint64_t len, const char* what) const {
  if (!contains(off, len)) {
    fail(what != nullptr ? std::string("truncated ELF file (") + what + " past the end)"
                         : std::string("truncated ELF file"));
  }
  return data_ + off;
}

ElfSegment ElfView::program_header(size_t i) const {
  const uint64_t at = phoff + uint64_t{i} * phentsize;
  auto segment = [](const auto& e) {
    return ElfSegment{e.p_type, e.p_flags, e.p_offset, e.p_vaddr, e.p_filesz, e.p_memsz, e.p_align};
  };
  const char* what = "program headers";
  return is64 ? segment(get<Elf64_Phdr>(at, what)) : segment(get<Elf32_Phdr>(at, what));
}

ElfSection ElfView::section(size_t i) const {
  const uint64_t at = shoff + uint64_t{i} * shentsize;
  auto section = [](const auto& e) {
    return ElfSection{e.sh_name, e.sh_type, e.sh_flags, e.sh_addr,      e.sh_offset,
                      e.sh_size, e.sh_link, e.sh_info,  e.sh_addralign, e.sh_entsize};
  };
  return is64 ? section(get<Elf64_Shdr>(at, nullptr)) : section(get<Elf32_Shdr>(at, nullptr));
}

std::vector<ElfSection> ElfView::sections() const {
  std::vector<ElfSection> out;
  out.reserve(shnum);
  for (size_t i = 0; i < shnum; ++i) out.push_back(section(i));
  return out;
}

std::string ElfView::string_at(uint32_t strtab, uint64_t off) const {
  if (strtab >= shnum) fail("bad string table index");
  const ElfSection s = section(strtab);
  if (off >= s.size) fail("bad string offset");
  const char* p = reinterpret_cast<const char*>(bytes(s.offset, s.size, "section")) + off;
  return std::string(p, strnlen(p, s.size - off));
}

std::string ElfView::section_name(const ElfSection& s) const {
  return shstrndx != SHN_UNDEF && shstrndx < shnum ? string_at(shstrndx, s.name) : "";
}

size_t ElfView::symbol_count(const ElfSection& symtab) const {
  return symtab.size / (is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
}

ElfSymbol ElfView::symbol_entry(const ElfSection& symtab, size_t i) const {
  auto symbol = [](const auto& e) {
    ElfSymbol s;
    s.name_offset = e.st_name, s.value = e.st_value, s.size = e.st_size, s.info = e.st_info;
    s.shndx = e.st_shndx;
    return s;
  };
  return is64 ? symbol(get<Elf64_Sym>(symtab.offset + i * sizeof(Elf64_Sym), nullptr))
              : symbol(get<Elf32_Sym>(symtab.offset + i * sizeof(Elf32_Sym), nullptr));
}

ElfSymbol ElfView::symbol(const ElfSection& symtab, size_t i) const {
  ElfSymbol s = symbol_entry(symtab, i);
  if (s.name_offset != 0) s.name = string_at(symtab.link, s.name_offset);
  return s;
}

std::vector<ElfRelocation> ElfView::relocations(const ElfSection& s) const {
  std::vector<ElfRelocation> out;
  const bool rela = s.type == SHT_RELA;
  const size_t ent = is64 ? (rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel))
                          : (rela ? sizeof(Elf32_Rela) : sizeof(Elf32_Rel));
  for (uint64_t off = 0; off + ent <= s.size; off += ent) {
    // ElfN_Rel is the prefix of ElfN_Rela: `ent` bytes into the larger one.
    const uint8_t* p = bytes(s.offset + off, ent, "section");
    ElfRelocation r;
    r.rela = rela;
    if (is64) {
      Elf64_Rela e{};
      std::memcpy(&e, p, ent);
      r.offset = e.r_offset;
      r.sym = static_cast<uint32_t>(ELF64_R_SYM(e.r_info));
      r.type = static_cast<uint32_t>(ELF64_R_TYPE(e.r_info));
      r.addend = rela ? e.r_addend : 0;
    } else {
      Elf32_Rela e{};
      std::memcpy(&e, p, ent);
      r.offset = e.r_offset;
      r.sym = ELF32_R_SYM(e.r_info);
      r.type = ELF32_R_TYPE(e.r_info);
      r.addend = rela ? e.r_addend : 0;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace padlock::emu
