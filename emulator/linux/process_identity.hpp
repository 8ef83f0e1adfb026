// What names the emulated process to the guest and to the tools around it: its PID, its
// width, the program /proc/self/exe names, the auxiliary vector /proc/self/auxv and gdb's
// qXfer:auxv read, and the padlock-emu an execve runs the new image under. Set when the
// program is loaded; a forked child takes its own PID (Process::become_child).
#pragma once

#include <string>

namespace padlock::emu {

struct ProcessIdentity {
  int pid = 0;           // the host process's: the guest's getpid, /proc/PID, si_pid
  bool guest64 = false;  // an x86-64 program (else i386)
  std::string exe_path;  // the program's real path as the guest sees it (the sysroot's left out)
  std::string auxv;      // the auxiliary vector as the guest's initial stack holds it
  // This padlock-emu's executable (beside the Python module: its bin/padlock-emu); empty
  // when there is none, and execve then fails with ENOEXEC.
  std::string emulator_path;
};

}  // namespace padlock::emu
