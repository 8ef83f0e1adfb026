#include "emulator/linux/strace.hpp"

#include <fcntl.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "emulator/linux/process.hpp"
#include "emulator/linux/syscall/syscalls.hpp"

namespace padlock::emu {

namespace {

struct Flag {
  uint64_t bit;
  const char* name;
};

std::string flags_str(uint64_t v, const Flag* flags, size_t n, const char* zero) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if ((v & flags[i].bit) == flags[i].bit && flags[i].bit != 0) {
      if (!s.empty()) s += "|";
      s += flags[i].name;
      v &= ~flags[i].bit;
    }
  }
  if (v != 0 || s.empty()) {
    char b[32];
    std::snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(v));
    if (s.empty() && v == 0) return zero;
    if (!s.empty()) s += "|";
    s += b;
  }
  return s;
}

std::string open_flags(uint64_t v) {
  static const Flag kFlags[] = {
      {O_WRONLY, "O_WRONLY"},     {O_RDWR, "O_RDWR"},         {O_CREAT, "O_CREAT"},
      {O_EXCL, "O_EXCL"},         {O_NOCTTY, "O_NOCTTY"},     {O_TRUNC, "O_TRUNC"},
      {O_APPEND, "O_APPEND"},     {O_NONBLOCK, "O_NONBLOCK"}, {O_DIRECTORY, "O_DIRECTORY"},
      {O_NOFOLLOW, "O_NOFOLLOW"}, {O_CLOEXEC, "O_CLOEXEC"},   {0100000, "O_LARGEFILE"},
  };
  std::string rest = flags_str(v & ~uint64_t{3} & ~uint64_t{O_WRONLY | O_RDWR}, kFlags,
                               sizeof kFlags / sizeof kFlags[0], "");
  const uint64_t acc = v & 3;
  std::string s = acc == O_WRONLY ? "O_WRONLY" : acc == O_RDWR ? "O_RDWR" : "O_RDONLY";
  if (!rest.empty()) s += "|" + rest;
  return s;
}

std::string prot_str(uint64_t v) {
  static const Flag kFlags[] = {
      {PROT_READ, "PROT_READ"}, {PROT_WRITE, "PROT_WRITE"}, {PROT_EXEC, "PROT_EXEC"}};
  return flags_str(v, kFlags, 3, "PROT_NONE");
}

std::string map_str(uint64_t v) {
  static const Flag kFlags[] = {
      {MAP_SHARED, "MAP_SHARED"},        {MAP_PRIVATE, "MAP_PRIVATE"},     {MAP_FIXED, "MAP_FIXED"},
      {MAP_ANONYMOUS, "MAP_ANONYMOUS"},  {MAP_NORESERVE, "MAP_NORESERVE"}, {MAP_STACK, "MAP_STACK"},
      {MAP_GROWSDOWN, "MAP_GROWSDOWN"},  {MAP_DENYWRITE, "MAP_DENYWRITE"}, {MAP_32BIT, "MAP_32BIT"},
      {0x100000, "MAP_FIXED_NOREPLACE"},
  };
  return flags_str(v, kFlags, sizeof kFlags / sizeof kFlags[0], "0");
}

std::string quoted(Process& p, uint64_t va) {
  if (va == 0) return "NULL";
  std::string s;
  if (!p.user().read_cstring(va, s, 4096)) {
    char b[32];
    std::snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(va));
    return b;
  }
  std::string out = "\"";
  size_t shown = 0;
  for (unsigned char ch : s) {
    if (shown++ == 64) {
      out += "\"...";
      return out;
    }
    switch (ch) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (ch < 32 || ch >= 127) {
          char b[8];
          std::snprintf(b, sizeof b, "\\%o", ch);
          out += b;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

std::string arg_str(Process& p, char fmt, uint64_t v, bool wide) {
  char b[40];
  const int64_t sv = wide ? static_cast<int64_t>(v) : static_cast<int32_t>(v);
  switch (fmt) {
    case 'd':
      std::snprintf(b, sizeof b, "%lld", static_cast<long long>(sv));
      return b;
    case 'u':
      std::snprintf(b, sizeof b, "%llu", static_cast<unsigned long long>(v));
      return b;
    case 'o':
      std::snprintf(b, sizeof b, "%#llo", static_cast<unsigned long long>(v));
      return b;
    case 'f':
      if (static_cast<int32_t>(v) == AT_FDCWD) return "AT_FDCWD";
      std::snprintf(b, sizeof b, "%d", static_cast<int32_t>(v));
      return b;
    case 's':
      return quoted(p, v);
    case 'O':
      return open_flags(v);
    case 'P':
      return prot_str(v);
    case 'M':
      return map_str(v);
    case 'S':
      if (v >= 1 && v <= kNumSignals) return signal_name(static_cast<int>(v));
      std::snprintf(b, sizeof b, "%llu", static_cast<unsigned long long>(v));
      return b;
    case 'p':
      if (v == 0) return "NULL";
      [[fallthrough]];
    default:
      std::snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(v));
      return b;
  }
}

const char* errno_name(int e) {
  switch (e) {
    case EPERM:
      return "EPERM";
    case ENOENT:
      return "ENOENT";
    case ESRCH:
      return "ESRCH";
    case EINTR:
      return "EINTR";
    case EIO:
      return "EIO";
    case ENXIO:
      return "ENXIO";
    case E2BIG:
      return "E2BIG";
    case ENOEXEC:
      return "ENOEXEC";
    case EBADF:
      return "EBADF";
    case ECHILD:
      return "ECHILD";
    case EAGAIN:
      return "EAGAIN";
    case ENOMEM:
      return "ENOMEM";
    case EACCES:
      return "EACCES";
    case EFAULT:
      return "EFAULT";
    case EBUSY:
      return "EBUSY";
    case EEXIST:
      return "EEXIST";
    case EXDEV:
      return "EXDEV";
    case ENODEV:
      return "ENODEV";
    case ENOTDIR:
      return "ENOTDIR";
    case EISDIR:
      return "EISDIR";
    case EINVAL:
      return "EINVAL";
    case ENFILE:
      return "ENFILE";
    case EMFILE:
      return "EMFILE";
    case ENOTTY:
      return "ENOTTY";
    case EFBIG:
      return "EFBIG";
    case ENOSPC:
      return "ENOSPC";
    case ESPIPE:
      return "ESPIPE";
    case EROFS:
      return "EROFS";
    case EPIPE:
      return "EPIPE";
    case ERANGE:
      return "ERANGE";
    case ENAMETOOLONG:
      return "ENAMETOOLONG";
    case ENOSYS:
      return "ENOSYS";
    case ENOTEMPTY:
      return "ENOTEMPTY";
    case ELOOP:
      return "ELOOP";
    case EOVERFLOW:
      return "EOVERFLOW";
    case ETIMEDOUT:
      return "ETIMEDOUT";
    default:
      return "E?";
  }
}

}  // namespace

void strace_line(FILE* out, Process& p, const SyscallAbi& abi, uint64_t nr, const uint64_t args[6],
                 const SyscallEntry* entry, int64_t result, bool no_result, bool unimplemented) {
  std::string line = std::to_string(p.identity().pid) + " ";
  const char* fmt = "xxxxxx";
  if (entry != nullptr && entry->name != nullptr) {
    line += entry->name;
    fmt = entry->args;
  } else {
    line += "syscall_" + std::to_string(nr);
  }
  line += "(";
  for (size_t i = 0; fmt[i] != '\0' && i < 6; ++i) {
    if (i > 0) line += ", ";
    line += arg_str(p, fmt[i], args[i], abi.wide);
  }
  line += ")";
  if (no_result) {
    line += " = ?";
  } else if (result < 0 && result >= -4095) {
    const int e = static_cast<int>(-result);
    line += " = -1 " + std::string(errno_name(e)) + " (" + std::strerror(e) + ")";
    if (unimplemented) line += " [unimplemented]";
  } else {
    char b[40];
    if (entry != nullptr && entry->ret == 'x') {
      std::snprintf(b, sizeof b, " = %#llx", static_cast<unsigned long long>(result));
    } else {
      std::snprintf(b, sizeof b, " = %lld", static_cast<long long>(result));
    }
    line += b;
  }
  std::fprintf(out, "%s\n", line.c_str());
}

}  // namespace padlock::emu
