#include "emulator/memory/code_pages.hpp"

namespace padlock::emu {

namespace {

// Unicorn: a page got its first translated block.
void on_code_page(uc_engine*, uint64_t page, void* mem) {
  static_cast<AddressSpace*>(mem)->protect_code(page);
}

// AddressSpace::will_write: the emulator writes a code page. Not from generated code
// (host_pc 0): system calls and PadLock instructions run between blocks.
void on_code_write(uint64_t page, void* uc) {
  uc_code_page_written(static_cast<uc_engine*>(uc), page, 0);
}

}  // namespace

bool track_code_pages(uc_engine* uc, AddressSpace& mem) {
  if (uc_ctl_code_page_hook(uc, on_code_page, &mem) != UC_ERR_OK) return false;
  mem.track_code(on_code_write, uc);
  return true;
}

}  // namespace padlock::emu
