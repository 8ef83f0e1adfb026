#include "emulator/harness/loader_source_lookup.hpp"

#include <elf.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "emulator/observe/check/source_lookup.hpp"

namespace padlock::emu {

const MachineSymbol* LoaderSourceLookup::function_at(uint64_t pc, const LoadedObject** obj) const {
  for (const auto& o : loader_.objects()) {
    if (pc < o->start || pc >= o->end) continue;
    for (const MachineSymbol& s : o->symbols) {
      if (s.type == STT_FUNC && pc >= s.address && pc < s.address + s.size) {
        *obj = o.get();
        return &s;
      }
    }
  }
  return nullptr;
}

uint64_t LoaderSourceLookup::function_entry(uint64_t pc) {
  const LoadedObject* obj = nullptr;
  const MachineSymbol* s = function_at(pc, &obj);
  return s != nullptr ? s->address : 0;
}

void LoaderSourceLookup::locate(check::Frame* const* frames, size_t n) {
  // (object path, section) -> the frames in it with their link-time address or offset.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<check::Frame*, uint64_t>>>
      groups;
  for (size_t i = 0; i < n; ++i) {
    check::Frame& f = *frames[i];
    const LoadedObject* obj = nullptr;
    const MachineSymbol* s = function_at(f.pc, &obj);
    if (s == nullptr) continue;
    f.function = s->name;
    if (obj->type != ET_REL) {
      groups[{obj->path, ""}].emplace_back(&f, f.pc - obj->bias);
      continue;
    }
    // The section placed highest at or below pc holds it.
    const std::pair<const std::string, uint64_t>* best = nullptr;
    for (const auto& sec : obj->sections) {
      if (sec.second <= f.pc && (best == nullptr || sec.second > best->second)) best = &sec;
    }
    if (best != nullptr) groups[{obj->path, best->first}].emplace_back(&f, f.pc - best->second);
  }
  for (const auto& [where, at] : groups) check::addr2line(where.first, where.second, at);
}

}  // namespace padlock::emu
