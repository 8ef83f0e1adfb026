// A simple GuestMemory for unit tests and the Python model API: regions of host memory
// with per-page permissions. Each region is contiguous in host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/unit_interface.hpp"

namespace padlock {

class FlatMemory final : public GuestMemory {
 public:
  static constexpr uint64_t kPage = 4096;
  enum Perm : uint8_t { kNone = 0, kRead = 1, kWrite = 2, kRW = 3 };

  // Maps [va, va+len) rounded out to pages, zero-filled, with `perm`.
  void map(uint64_t va, uint64_t len, uint8_t perm = kRW);
  // Changes permissions of the pages covering [va, va+len); they must be mapped.
  void protect(uint64_t va, uint64_t len, uint8_t perm);
  // Direct host access for test set-up, ignoring permissions. Aborts if unmapped.
  uint8_t* host(uint64_t va, uint64_t len);

  uint8_t* translate(uint64_t va, uint64_t len, Access access) override;
  uint64_t accessible(uint64_t va, uint64_t len, Access access) override;

 private:
  struct Region {
    uint64_t base = 0;
    uint64_t size = 0;
    std::unique_ptr<uint8_t[]> bytes;
    std::vector<uint8_t> perms;  // one per page
  };
  Region* find(uint64_t va);
  std::vector<Region> regions_;
};

}  // namespace padlock
