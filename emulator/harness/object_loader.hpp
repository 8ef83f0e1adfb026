// ELF files for the function harness (emulator/harness/machine.hpp): executables (ET_EXEC) at
// their addresses, shared objects and PIEs (ET_DYN) at a free base with their dynamic
// relocations applied, and relocatable objects (ET_REL, a .o) laid out section by section
// with their relocations applied. Undefined symbols bind, in order, to symbols the user
// defined, to earlier objects' exports, and otherwise to a stub of the Machine, so a call
// to an import reaches the host (Python) callback registered under its name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/harness/machine.hpp"
#include "emulator/loader/elf_loader.hpp"

namespace padlock::emu {

struct MachineSymbol {
  std::string name;
  uint64_t address = 0;
  uint64_t size = 0;
  uint8_t type = 0;  // STT_*
  uint8_t bind = 0;  // STB_*
};

struct LoadedObject {
  std::string path;
  uint16_t type = 0;   // ET_EXEC, ET_DYN or ET_REL
  uint64_t bias = 0;   // ET_DYN: load bias; ET_REL: start of its memory; ET_EXEC: 0
  uint64_t start = 0;  // lowest and end of the highest mapped page
  uint64_t end = 0;
  uint64_t entry = 0;                        // e_entry + bias (0 for ET_REL)
  std::vector<MachineSymbol> symbols;        // defined symbols (.symtab and .dynsym)
  std::map<std::string, uint64_t> sections;  // ET_REL: where each allocated section went
  std::vector<std::string> imports;          // undefined symbols bound to stubs
  size_t relocations = 0;                    // relocations applied
  std::vector<std::string> skipped;          // relocations left alone (IRELATIVE), one line each
};

class ObjectLoader {
 public:
  explicit ObjectLoader(Machine& m) : m_(m) {}

  // Loads `path`; `base` (page aligned) asks for that address (ET_DYN/ET_REL; 0: the
  // arena's next free range). Throws MachineError with a one-line reason.
  const LoadedObject& load(const std::string& path, uint64_t base = 0);

  // Binds `name` for objects loaded later (an import the test provides as data or code).
  void define(const std::string& name, uint64_t address) {
    defined_[name] = address;
    user_symbols_[name] = MachineSymbol{name, address, 0, 0, 1 /* STB_GLOBAL */};
  }

  // A symbol by name: user definitions, then global/weak symbols of the objects in load
  // order, then local ones. Null if none.
  const MachineSymbol* find(const std::string& name) const;
  const std::vector<std::unique_ptr<LoadedObject>>& objects() const { return objects_; }

  // The loaded objects and the user's definitions, beside Machine::snapshot(): restored
  // with the machine's, symbols resolve as they did when it was taken.
  std::vector<uint8_t> snapshot() const;
  void restore(const uint8_t* data, size_t size);

 private:
  uint64_t resolve_import(LoadedObject& obj, const std::string& name, bool weak);
  void load_image(LoadedObject& obj, const ElfFile& elf, const ElfView& v,
                  const std::vector<ElfSection>& sections, uint64_t base);
  void load_relocatable(LoadedObject& obj, const ElfView& v,
                        const std::vector<ElfSection>& sections, uint64_t base);

  Machine& m_;
  std::vector<std::unique_ptr<LoadedObject>> objects_;
  std::unordered_map<std::string, uint64_t> defined_;
  std::unordered_map<std::string, MachineSymbol> user_symbols_;
};

}  // namespace padlock::emu
