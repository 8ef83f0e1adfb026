// --strace: one line per system call with its result, in strace's style:
//   1234 openat(AT_FDCWD, "/etc/hosts", O_RDONLY|O_CLOEXEC) = 3
//   1234 stat64("/nonexistent", 0xbffff0a0) = -1 ENOENT (No such file or directory)
//   1234 rseq(0x8130c60, 0x20, 0, 0x53053053) = -1 ENOSYS (Function not implemented)
//   [unimplemented]
#pragma once

#include <cstdint>
#include <cstdio>

namespace padlock::emu {

class Process;
struct SyscallAbi;
struct SyscallEntry;

void strace_line(FILE* out, Process& p, const SyscallAbi& abi, uint64_t nr, const uint64_t args[6],
                 const SyscallEntry* entry, int64_t result, bool no_result, bool unimplemented);

}  // namespace padlock::emu
