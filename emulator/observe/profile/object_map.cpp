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
  FileIdentity identity;
  const ElfSegments head = read_elf_segments(host_path, &identity);
  return add_mapped(head.ok ? host_path : "", identity, head.segments, guest_path, bias);
}

uint32_t ObjectMap::add(const std::vector<LoadSegment>& segments,
                        const std::vector<FunctionSymbol>& functions, const std::string& guest_path,
                        uint64_t bias, std::shared_ptr<const DebugInfo> debug) {
  const uint32_t index = add_mapped("", {}, segments, guest_path, bias);
  GuestObject& o = objects_[index];
  o.debug = std::move(debug);
  o.first_fn = static_cast<uint32_t>(functions_.size());
  o.functions = functions;
  for (const FunctionSymbol& f : o.functions) functions_.push_back({f.name, index, f.addr + bias});
  return index;
}

uint32_t ObjectMap::add_mapped(const std::string& host_path, const FileIdentity& identity,
                               const std::vector<LoadSegment>& segments,
                               const std::string& guest_path, uint64_t bias) {
  GuestObject o;
  o.path = guest_path;
  o.name = base_name(guest_path);
  o.bias = bias;
  o.host_path = host_path;
  o.identity = identity;
  o.symbols_read = o.debug_read = host_path.empty();
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const LoadSegment& s : segments) {
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
  objects_.push_back(std::move(o));
  ++generation_;
  return index;
}

bool ObjectMap::same_file(const GuestObject& o) const {
  return !o.host_path.empty() && file_identity(o.host_path) == o.identity;
}

bool ObjectMap::file_changed(uint32_t index) const {
  const GuestObject& o = objects_[index];
  return !o.host_path.empty() && !same_file(o);
}

const DebugInfo* ObjectMap::module(uint32_t index) const {
  GuestObject& o = objects_[index];
  if (!o.debug_read) {
    o.debug_read = true;
    if (same_file(o)) o.debug = std::make_shared<const DebugInfo>(o.host_path, sysroot_);
  }
  return o.debug.get();
}

const DebugInfo* ObjectMap::debug_info(uint32_t index) const {
  const DebugInfo* m = module(index);
  return m != nullptr && !m->debug_file().empty() ? m : nullptr;
}

bool ObjectMap::any_debug_info() const {
  bool any = false;
  for (uint32_t i = 0; i < objects_.size(); ++i) any = debug_info(i) != nullptr || any;
  return any;
}

const GuestObject& ObjectMap::symbols(uint32_t index) const {
  GuestObject& o = objects_[index];
  if (o.symbols_read) return o;
  o.symbols_read = true;
  o.first_fn = static_cast<uint32_t>(functions_.size());
  if (!same_file(o)) return o;
  // A stripped file's (.dynsym only) debug file names every function (DebugInfo).
  const DebugInfo* m = module(index);
  if (m == nullptr) return o;
  o.functions = m->functions();
  // Only a handle with debug information is kept (its lines are read later).
  if (m->debug_file().empty()) o.debug.reset();
  for (const FunctionSymbol& f : o.functions)
    functions_.push_back({f.name, index, f.addr + o.bias});
  return o;
}

uint64_t ObjectMap::order(uint32_t fn) const {
  const FunctionInfo& f = functions_[fn];
  if (f.object == kNoObject) return 0;
  const GuestObject& o = objects_[f.object];
  const uint64_t within = fn == o.unknown_fn ? 0 : fn - o.first_fn + 1;
  return (uint64_t(f.object) + 1) << 32 | within;
}

void ObjectMap::file_mapped(const std::string& host_path, const std::string& guest_path,
                            uint64_t va, uint64_t offset) {
  for (const GuestObject& o : objects_) {
    if (o.live && o.path == guest_path && va >= o.lo && va < o.hi) return;  // known already
  }
  FileIdentity identity;
  const ElfSegments head = read_elf_segments(host_path, &identity);
  if (!head.ok) return;
  // ld.so maps each PT_LOAD at bias + page_down(vaddr) from page_down(offset).
  for (const LoadSegment& s : head.segments) {
    if ((s.offset & ~(kPage - 1)) == offset) {
      add_mapped(host_path, identity, head.segments, guest_path, va - (s.vaddr & ~(kPage - 1)));
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

uint32_t ObjectMap::object_at(uint64_t addr) const {
  // The newest live object wins where spans overlap (a re-mapping at the same place).
  for (size_t i = objects_.size(); i-- > 0;) {
    const GuestObject& o = objects_[i];
    if (o.live && addr >= o.lo && addr < o.hi) return static_cast<uint32_t>(i);
  }
  return kNoObject;
}

uint32_t ObjectMap::function_at(uint64_t addr) const {
  return function_in(object_at(addr), addr);
}

uint32_t ObjectMap::function_in(uint32_t index, uint64_t addr) const {
  if (index == kNoObject || index >= objects_.size()) return kAnonymousFn;
  const GuestObject& o = symbols(index);
  const uint64_t link = addr - o.bias;
  auto it = std::upper_bound(o.functions.begin(), o.functions.end(), link,
                             [](uint64_t a, const FunctionSymbol& f) { return a < f.addr; });
  if (it == o.functions.begin()) return o.unknown_fn;
  --it;
  if (it->size != 0 && link >= it->addr + it->size) return o.unknown_fn;
  return o.first_fn + static_cast<uint32_t>(it - o.functions.begin());
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
  const DebugInfo* debug = debug_info(f.object);
  if (debug != nullptr && debug->line_at(addr - o.bias, line)) {
    loc.file = line.file;
    loc.line = line.line;
  }
  return loc;
}

std::string ObjectMap::source_file(uint32_t fn) const {
  const FunctionInfo& f = functions_[fn];
  if (f.object == kNoObject || f.entry == 0) return "";
  const GuestObject& o = objects_[f.object];
  const DebugInfo* debug = debug_info(f.object);
  SourceLine line;
  return debug != nullptr && debug->line_at(f.entry - o.bias, line) ? line.file : "";
}

}  // namespace padlock::emu::profile
