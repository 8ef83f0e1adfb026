#include "emulator/observe/profile/object_map.hpp"

#include <algorithm>

namespace padlock::emu::profile {

namespace {
constexpr uint64_t kPage = 4096;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

ObjectMap::ObjectMap() {
  functions_.push_back({"??? (anonymous)", kNoObject, 0});
}

uint32_t ObjectMap::add(const std::string& host_path, const std::string& guest_path,
                        uint64_t bias) {
  for (uint32_t i = 0; i < objects_.size(); ++i) {
    if (objects_[i].live && objects_[i].path == guest_path && objects_[i].bias == bias) return i;
  }
  std::shared_ptr<const DebugInfo> debug;
  const ElfSymbols syms = symbols_of(host_path, debug);
  return add(syms, guest_path, bias, std::move(debug));
}

ElfSymbols ObjectMap::symbols_of(const std::string& host_path,
                                 std::shared_ptr<const DebugInfo>& debug) {
  ElfSymbols syms = read_elf_symbols(host_path);
  if (!syms.ok) return syms;
  auto info = std::make_shared<const DebugInfo>(host_path, sysroot_);
  if (info->debug_file().empty()) return syms;
  debug = info;
  // A stripped file (.dynsym only): the debug file's .symtab names every function.
  if (!syms.full_symtab && !info->functions().empty()) {
    syms.functions = info->functions();
    syms.full_symtab = true;
  }
  return syms;
}

uint32_t ObjectMap::add(const ElfSymbols& syms, const std::string& guest_path, uint64_t bias,
                        std::shared_ptr<const DebugInfo> debug) {
  GuestObject o;
  o.debug = std::move(debug);
  o.path = guest_path;
  o.name = base_name(guest_path);
  o.bias = bias;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const LoadSegment& s : syms.segments) {
    lo = std::min(lo, s.vaddr & ~(kPage - 1));
    hi = std::max(hi, s.vaddr + s.memsz);
  }
  if (lo > hi) lo = hi = 0;
  o.lo = lo + bias;
  o.hi = hi + bias;
  const uint32_t index = static_cast<uint32_t>(objects_.size());
  o.unknown_fn = static_cast<uint32_t>(functions_.size());
  functions_.push_back({"??? (" + o.name + ")", index, 0});
  o.first_fn = static_cast<uint32_t>(functions_.size());
  o.functions = syms.functions;
  for (const FunctionSymbol& f : o.functions) functions_.push_back({f.name, index, f.addr + bias});
  objects_.push_back(std::move(o));
  ++generation_;
  return index;
}

void ObjectMap::file_mapped(const std::string& host_path, const std::string& guest_path,
                            uint64_t va, uint64_t offset) {
  for (const GuestObject& o : objects_) {
    if (o.live && o.path == guest_path && va >= o.lo && va < o.hi) return;  // known already
  }
  const ElfSymbols head = read_elf_symbols(host_path);
  if (!head.ok) return;
  // ld.so maps each PT_LOAD at bias + page_down(vaddr) from page_down(offset).
  for (const LoadSegment& s : head.segments) {
    if ((s.offset & ~(kPage - 1)) == offset) {
      std::shared_ptr<const DebugInfo> debug;
      const ElfSymbols syms = symbols_of(host_path, debug);
      add(syms, guest_path, va - (s.vaddr & ~(kPage - 1)), std::move(debug));
      return;
    }
  }
}

void ObjectMap::unmapped(uint64_t va, uint64_t len) {
  for (GuestObject& o : objects_) {
    if (o.live && o.lo >= va && o.hi <= va + len) {
      o.live = false;
      ++generation_;
    }
  }
}

uint32_t ObjectMap::function_at(uint64_t addr) const {
  // The newest live object wins where spans overlap (a re-mapping at the same place).
  for (size_t i = objects_.size(); i-- > 0;) {
    const GuestObject& o = objects_[i];
    if (!o.live || addr < o.lo || addr >= o.hi) continue;
    const uint64_t link = addr - o.bias;
    auto it = std::upper_bound(o.functions.begin(), o.functions.end(), link,
                               [](uint64_t a, const FunctionSymbol& f) { return a < f.addr; });
    if (it == o.functions.begin()) return o.unknown_fn;
    --it;
    if (it->size != 0 && link >= it->addr + it->size) return o.unknown_fn;
    return o.first_fn + static_cast<uint32_t>(it - o.functions.begin());
  }
  return kAnonymousFn;
}

SourceLocation ObjectMap::locate(uint64_t addr) const {
  SourceLocation loc;
  const uint32_t fn = function_at(addr);
  const FunctionInfo& f = functions_[fn];
  loc.function = f.name;
  if (f.object == kNoObject) {
    loc.offset = addr;
    return loc;
  }
  const GuestObject& o = objects_[f.object];
  loc.object = o.path;
  loc.offset = addr - (f.entry != 0 ? f.entry : o.bias);
  SourceLine line;
  if (o.debug && o.debug->line_at(addr - o.bias, line)) {
    loc.file = line.file;
    loc.line = line.line;
  }
  return loc;
}

std::string ObjectMap::source_file(uint32_t fn) const {
  const FunctionInfo& f = functions_[fn];
  if (f.object == kNoObject || f.entry == 0) return "";
  const GuestObject& o = objects_[f.object];
  SourceLine line;
  return o.debug && o.debug->line_at(f.entry - o.bias, line) ? line.file : "";
}

}  // namespace padlock::emu::profile
