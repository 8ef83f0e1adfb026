// The function symbols and separate debug information of one ELF file, read with elfutils'
// libdwfl. Debug information: the file itself when it has DWARF, else a debug file named by its
// build-id (DIR/.build-id/xx/yyyy.debug) or by its .gnu_debuglink (next to it, in .debug/, or under
// DIR mirroring its directory), where DIR is <sysroot>/usr/lib/debug, then the host's
// /usr/lib/debug. Debian's -dbgsym packages install the build-id form; a sysroot made by
// scripts/make-sysroot.sh keeps the guest's paths, so the guest path (the host path without
// the sysroot) is the one the debuglink rule mirrors. Symbols: libdwfl's symbol table of
// the file, its .symtab, else (a stripped file) its debug file's .symtab, else its .dynsym.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "emulator/observe/profile/function_symbols.hpp"

namespace padlock::emu::profile {

struct SourceLine {
  std::string file;  // as the DWARF line table names it (absolute when the producer said so)
  int line = 0;
};

class DebugInfo {
 public:
  // `host_path`: the file as the emulator opened it; `sysroot`: -L DIR or "".
  DebugInfo(const std::string& host_path, const std::string& sysroot);
  ~DebugInfo();
  DebugInfo(const DebugInfo&) = delete;
  DebugInfo& operator=(const DebugInfo&) = delete;

  // The file that holds the debug information ("" when none was found).
  const std::string& debug_file() const { return debug_file_; }
  // The file's function symbols (function_table), link-time addresses; read on the first
  // call. Empty when the file is not an ELF file libdwfl can read.
  const std::vector<FunctionSymbol>& functions() const;
  // The source line of a link-time address; false without line information.
  bool line_at(uint64_t link_addr, SourceLine& out) const;
  // The same, but for code inlined into the function the symbol table names, the line of
  // the outermost inlined call in that function (addr2line -i's last line): an inline asm
  // helper's instruction is reported at its caller's line, not in a header.
  bool caller_line_at(uint64_t link_addr, SourceLine& out) const;

 private:
  struct Search;  // libdwfl's state for this file
  std::unique_ptr<Search> search_;
  std::string debug_file_;
  mutable bool functions_read_ = false;
  mutable std::vector<FunctionSymbol> functions_;
};

}  // namespace padlock::emu::profile
