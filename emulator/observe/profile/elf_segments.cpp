#include "emulator/observe/profile/elf_segments.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "emulator/loader/elf_view.hpp"

namespace padlock::emu::profile {

namespace {

// The PT_LOAD program headers (those that can be read).
void read_segments(const ElfView& v, ElfSegments& out) {
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

FileIdentity file_identity(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? identity_of(st) : FileIdentity{};
}

ElfSegments read_elf_segments(const std::string& path, FileIdentity* identity) {
  ElfSegments out;
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
