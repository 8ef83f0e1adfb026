// The names of kernel module code in system mode (docs/system.md, "Kernel symbols"): the
// functions of each module's .ko symbol table, placed at the section addresses the guest
// reported. The guest's init
// prints a module's sections to the console as it loads them
//
//   PADLOCK-SECTION padlock_aes .text 0xf8a3c000
//
// (from /sys/module/NAME/sections/), and QEMU logs the console to a file this class reads
// when the run ends: a module's addresses exist only once the guest has loaded it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/observe/check/checker.hpp"

namespace padlock::emu {

// One function of the kernel or of a module, at its guest address.
struct KernelFunction {
  uint64_t addr = 0, size = 0;  // size 0: up to the next function
  std::string name;
  uint32_t object = 0;  // index into KernelSymbols::objects()
};

// What a kernel address is: `function` + `offset` in `object` (the module's name as the
// kernel spells it: padlock_aes).
struct KernelLocation {
  std::string object, function;
  uint64_t offset = 0;
};

class KernelSymbols final : public check::SourceLookup {
 public:
  // A module at the section addresses the guest reported (section name -> address): the
  // functions of `ko`'s symbol table in those sections. False when `ko` is no readable ELF
  // relocatable object.
  bool add_module(const std::string& name, const std::string& ko,
                  const std::vector<std::pair<std::string, uint64_t>>& sections);
  // Reads the console log for PADLOCK-SECTION lines and adds each module named there whose
  // .ko is among `kos` (the file name, '-' read as '_'), once per load: a section reported
  // again for a module is a new load of it. Returns the loads added.
  unsigned add_modules_from_console(const std::string& console_log,
                                    const std::vector<std::string>& kos);

  // The function holding `pc`; false outside every known function.
  bool resolve(uint64_t pc, KernelLocation& where) const;
  bool empty() const { return functions_.empty(); }
  const std::vector<std::string>& objects() const { return objects_; }

  // check::SourceLookup: function, module and offset of each frame.
  void locate(check::Frame* const* frames, size_t n) override;
  bool is_code(uint64_t pc) override;
  uint64_t function_entry(uint64_t pc) override;

 private:
  const KernelFunction* find(uint64_t pc) const;
  bool in_code(uint64_t pc) const;
  void add(std::vector<KernelFunction> fns);

  std::vector<std::string> objects_;
  std::vector<KernelFunction> functions_;  // sorted by address
  // The spans of code: each module section, [lo, hi).
  std::vector<std::pair<uint64_t, uint64_t>> spans_;
};

}  // namespace padlock::emu
