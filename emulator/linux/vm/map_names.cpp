#include "emulator/linux/vm/map_names.hpp"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace padlock::emu {

void MapNames::clear(uint64_t va, uint64_t len) {
  const uint64_t end = va + len;
  auto it = ranges_.lower_bound(va);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > va) {
      // Split the range that starts before va: keep its head, re-add its tail.
      Range tail = prev->second;
      prev->second.end = va;
      if (tail.end > end) {
        tail.name.offset += end - prev->first;
        ranges_.emplace(end, tail);
      }
    }
  }
  it = ranges_.lower_bound(va);
  while (it != ranges_.end() && it->first < end) {
    if (it->second.end > end) {
      Range tail = it->second;
      tail.name.offset += end - it->first;
      ranges_.erase(it);
      ranges_.emplace(end, tail);
      break;
    }
    it = ranges_.erase(it);
  }
}

void MapNames::set(uint64_t va, uint64_t len, const Name& n) {
  clear(va, len);
  if (len > 0) ranges_.emplace(va, Range{va + len, n});
}

void MapNames::move(uint64_t from, uint64_t len, uint64_t to) {
  std::vector<std::pair<uint64_t, Range>> moved;
  for (auto it = ranges_.begin(); it != ranges_.end(); ++it) {
    const uint64_t s = std::max(it->first, from), e = std::min(it->second.end, from + len);
    if (s >= e) continue;
    Range r = it->second;
    r.name.offset += s - it->first;
    r.end = e - from + to;
    moved.emplace_back(s - from + to, r);
  }
  clear(from, len);
  for (const auto& [start, r] : moved) set(start, r.end - start, r.name);
}

const MapNames::Name* MapNames::at(uint64_t va, uint64_t* offset, uint64_t* until) const {
  auto it = ranges_.upper_bound(va);
  const uint64_t next = it != ranges_.end() ? it->first : ~uint64_t{0};
  if (it != ranges_.begin()) {
    const auto prev = std::prev(it);
    if (va < prev->second.end) {
      *offset = prev->second.name.offset + (va - prev->first);
      *until = prev->second.end;
      return &prev->second.name;
    }
  }
  *offset = 0;
  *until = next;
  return nullptr;
}

}  // namespace padlock::emu
