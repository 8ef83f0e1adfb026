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
  return add(read_elf_symbols(host_path), guest_path, bias);
}

uint32_t ObjectMap::add(const ElfSymbols& syms, const std::string& guest_path, uint64_t bias) {
  GuestObject o;
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
  const ElfSymbols syms = read_elf_symbols(host_path);
  if (!syms.ok) return;
  // ld.so maps each PT_LOAD at bias + page_down(vaddr) from page_down(offset).
  for (const LoadSegment& s : syms.segments) {
    if ((s.offset & ~(kPage - 1)) == offset) {
      add(syms, guest_path, va - (s.vaddr & ~(kPage - 1)));
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

}  // namespace padlock::emu::profile
