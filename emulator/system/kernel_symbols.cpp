#include "emulator/system/kernel_symbols.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "emulator/loader/elf_view.hpp"

namespace padlock::emu {

namespace {

// The kernel's name of a module file: padlock-aes.ko is padlock_aes (kernel/module's
// KBUILD_MODNAME turns '-' into '_').
std::string module_name(const std::string& ko) {
  std::string n = ko.substr(ko.rfind('/') + 1);
  if (n.size() > 3 && n.compare(n.size() - 3, 3, ".ko") == 0) n.resize(n.size() - 3);
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

}  // namespace

bool KernelSymbols::add_module(const std::string& name, const std::string& ko,
                               const std::vector<std::pair<std::string, uint64_t>>& sections) {
  std::vector<KernelFunction> fns;
  try {
    const std::vector<uint8_t> bytes = read_file_bytes(ko);
    const ElfView v(ko, bytes);
    if (v.type != ET_REL) return false;
    const std::vector<ElfSection> shdrs = v.sections();
    // Section index -> its guest address, for the sections the guest reported.
    std::map<size_t, uint64_t> base;
    for (size_t i = 0; i < shdrs.size(); ++i) {
      const std::string sname = v.section_name(shdrs[i]);
      for (const auto& [reported, addr] : sections) {
        if (reported != sname || (shdrs[i].flags & SHF_EXECINSTR) == 0) continue;
        base[i] = addr;
        spans_.emplace_back(addr, addr + shdrs[i].size);
      }
    }
    const uint32_t object = static_cast<uint32_t>(objects_.size());
    for (const ElfSection& s : shdrs) {
      if (s.type != SHT_SYMTAB) continue;
      for (size_t i = 1; i < v.symbol_count(s); ++i) {
        ElfSymbol sym = v.symbol(s, i);
        const auto at = base.find(sym.shndx);
        // In a relocatable object st_value is the offset in its section (0 included).
        if (sym.type() != STT_FUNC || at == base.end() || sym.name.empty()) continue;
        fns.push_back({at->second + sym.value, sym.size, std::move(sym.name), object});
      }
    }
  } catch (const LoadError&) {
    return false;
  }
  objects_.push_back(name);
  add(std::move(fns));
  return true;
}

void KernelSymbols::add(std::vector<KernelFunction> fns) {
  functions_.insert(functions_.end(), std::make_move_iterator(fns.begin()),
                    std::make_move_iterator(fns.end()));
  std::sort(functions_.begin(), functions_.end(),
            [](const KernelFunction& a, const KernelFunction& b) {
              return a.addr != b.addr ? a.addr < b.addr : a.name < b.name;
            });
  // One name per address (a module's aliases: the first in name order).
  functions_.erase(std::unique(functions_.begin(), functions_.end(),
                               [](const KernelFunction& a, const KernelFunction& b) {
                                 return a.addr == b.addr;
                               }),
                   functions_.end());
}

unsigned KernelSymbols::add_modules_from_console(const std::string& console_log,
                                                 const std::vector<std::string>& kos) {
  // Module -> each load of it -> its sections, in the order the guest printed them. A
  // section reported again starts a new load: the init loads a module a second time when
  // its self-tests failed (tests/system/init.sh, PADLOCK-UNTESTED), at other addresses.
  using Sections = std::vector<std::pair<std::string, uint64_t>>;
  std::map<std::string, std::vector<Sections>> reported;
  std::ifstream in(console_log);
  std::string line;
  static constexpr const char kTag[] = "PADLOCK-SECTION ";
  while (std::getline(in, line)) {
    const size_t at = line.find(kTag);
    if (at == std::string::npos) continue;
    // MODULE SECTION 0xADDRESS
    char module[64], section[64], address[32];
    if (std::sscanf(line.c_str() + at + sizeof kTag - 1, "%63s %63s %31s", module, section,
                    address) != 3) {
      continue;
    }
    char* end = nullptr;
    const uint64_t addr = std::strtoull(address, &end, 16);
    if (end == address || *end != '\0' || addr == 0) continue;
    std::vector<Sections>& loads = reported[module];
    const auto same = [&](const auto& s) { return s.first == section; };
    if (loads.empty() || std::any_of(loads.back().begin(), loads.back().end(), same)) {
      loads.emplace_back();
    }
    loads.back().emplace_back(section, addr);
  }
  unsigned added = 0;
  for (const std::string& ko : kos) {
    const std::string name = module_name(ko);
    const auto it = reported.find(name);
    if (it == reported.end()) continue;
    for (const Sections& load : it->second) added += add_module(name, ko, load) ? 1 : 0;
  }
  return added;
}

const KernelFunction* KernelSymbols::find(uint64_t pc) const {
  auto it = std::upper_bound(functions_.begin(), functions_.end(), pc,
                             [](uint64_t a, const KernelFunction& f) { return a < f.addr; });
  if (it == functions_.begin()) return nullptr;
  --it;
  if (it->size != 0) return pc < it->addr + it->size ? &*it : nullptr;
  // No size: up to the next function, within a section of code.
  const auto next = it + 1;
  if (next != functions_.end() && pc >= next->addr) return nullptr;
  return in_code(pc) ? &*it : nullptr;
}

bool KernelSymbols::resolve(uint64_t pc, KernelLocation& where) const {
  const KernelFunction* f = find(pc);
  if (f == nullptr) return false;
  where.object = objects_[f->object];
  where.function = f->name;
  where.offset = pc - f->addr;
  return true;
}

void KernelSymbols::locate(check::Frame* const* frames, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    KernelLocation where;
    if (!resolve(frames[i]->pc, where)) continue;
    frames[i]->function = where.function;
    frames[i]->module = where.object;
    frames[i]->offset = where.offset;
  }
}

bool KernelSymbols::is_code(uint64_t pc) {
  return in_code(pc);
}

bool KernelSymbols::in_code(uint64_t pc) const {
  return std::any_of(spans_.begin(), spans_.end(),
                     [pc](const auto& s) { return pc >= s.first && pc < s.second; });
}

uint64_t KernelSymbols::function_entry(uint64_t pc) {
  const KernelFunction* f = find(pc);
  return f != nullptr ? f->addr : 0;
}

}  // namespace padlock::emu
