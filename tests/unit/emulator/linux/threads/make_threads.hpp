// The threads' tests start from a table of `n` threads: `first_tid` running, then
// first_tid + 1, ... in creation order (the round robin's).
#pragma once

#include <memory>

#include "emulator/linux/threads/thread_table.hpp"

namespace padlock::emu::test {

inline void make_threads(ThreadTable& table, int first_tid, int n) {
  table.restart(first_tid);
  for (int i = 1; i < n; ++i) {
    auto t = std::make_unique<GuestThread>();
    t->tid = first_tid + i;
    table.add(std::move(t));
  }
}

}  // namespace padlock::emu::test
