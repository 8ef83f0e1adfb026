#include "emulator/linux/threads/thread_table.hpp"

#include <cerrno>

namespace padlock::emu {

using State = GuestThread::State;

ThreadTable::ThreadTable(uint64_t& running_blocked) : running_blocked_(running_blocked) {
  threads_.push_back(std::make_unique<GuestThread>());
}

void ThreadTable::restart(int tid) {
  std::unique_ptr<GuestThread> self = std::move(threads_[cur_]);
  threads_.clear();
  threads_.push_back(std::move(self));
  cur_ = 0;
  threads_[0]->tid = tid;
}

void ThreadTable::add(std::unique_ptr<GuestThread> t) {
  threads_.push_back(std::move(t));
}

int ThreadTable::live() const {
  int n = 0;
  for (const auto& t : threads_) n += t->state != State::Dead;
  return n;
}

GuestThread* ThreadTable::find_live(int tid) {
  for (const auto& t : threads_) {
    if (t->tid == tid && t->state != State::Dead) return t.get();
  }
  return nullptr;
}

void ThreadTable::block(uint64_t futex_addr, uint32_t bitset, uint64_t deadline) {
  GuestThread& t = running();
  t.state = State::Waiting;
  t.futex_addr = futex_addr;
  t.bitset = bitset;
  t.deadline = deadline;
  t.wait_seq = ++wait_seq_;
  t.pi_wait = false;
  t.requeue_pi_to = 0;
  t.requeued_pi = false;
  t.sigwait = false;
  t.has_result = false;
}

void ThreadTable::wake(GuestThread& t, int64_t result) {
  t.state = State::Runnable;
  t.deadline = VirtualTime::kNever;
  t.has_result = true;
  t.result = result;
  t.host_io = false;
  t.child.on = false;
  t.recheck = t.connecting = false;
  t.retry = false;
  // Linux restarts FUTEX_LOCK_PI after a signal's handler instead of failing it, and
  // FUTEX_WAIT_REQUEUE_PI before its requeue; once requeued, the call returns EAGAIN
  // (the restart would find the first word changed).
  if (t.requeued_pi && result == -EINTR) {
    t.result = -EAGAIN;
  } else if ((t.pi_wait || t.requeue_pi_to != 0) && result == -EINTR) {
    t.has_result = false;
    t.retry = true;
  }
  t.pi_wait = false;
  t.requeue_pi_to = 0;
  t.requeued_pi = false;
  // A long pipe write that a signal interrupts returns what it wrote, as Linux's.
  if (t.write_done > 0 && result == -EINTR) t.result = static_cast<int64_t>(t.write_done);
  t.write_done = 0;
  if (t.sigwait) {
    // rt_sigtimedwait: its mask again; a signal makes the call again (which takes it), the
    // deadline ends it with EAGAIN.
    (&t == &running() ? running_blocked_ : t.blocked) = t.sigwait_mask;
    t.sigwait = false;
    if (result == -EINTR) {
      t.has_result = false;
      t.retry = true;
    } else {
      t.result = -EAGAIN;
    }
  }
}

// A futex waiter's bitset is never 0 (FUTEX_WAIT_BITSET refuses it with EINVAL), so
// FUTEX_REQUEUE's ~0u reaches every plain waiter.
GuestThread* ThreadTable::oldest_plain_waiter(uint64_t uaddr, uint32_t bitset) const {
  GuestThread* first = nullptr;
  // A few threads: a scan per wake, no allocation.
  for (const auto& t : threads_) {
    if (t->state == State::Waiting && t->futex_addr == uaddr && uaddr != 0 && !t->pi_wait &&
        t->requeue_pi_to == 0 && (t->bitset & bitset) != 0 &&
        (first == nullptr || t->wait_seq < first->wait_seq)) {
      first = t.get();
    }
  }
  return first;
}

int ThreadTable::futex_wake(uint64_t uaddr, int64_t n, uint32_t bitset) {
  int woken = 0;
  while (GuestThread* first = oldest_plain_waiter(uaddr, bitset)) {
    wake(*first, 0);
    if (++woken >= n) break;  // Linux wakes one even when asked for none
  }
  return woken;
}

int ThreadTable::futex_requeue(uint64_t uaddr, int64_t n_wake, uint64_t to, int64_t n_requeue) {
  const int woken = n_wake > 0 ? futex_wake(uaddr, n_wake, ~0u) : 0;
  int moved = 0;
  while (moved < n_requeue) {
    GuestThread* first = oldest_plain_waiter(uaddr, ~0u);
    if (first == nullptr) break;
    first->futex_addr = to;
    ++moved;
  }
  return woken + moved;
}

GuestThread* ThreadTable::pi_waiter(uint64_t uaddr) {
  GuestThread* first = nullptr;
  for (const auto& t : threads_) {
    if (t->state == State::Waiting && t->pi_wait && t->futex_addr == uaddr &&
        (first == nullptr || t->wait_seq < first->wait_seq)) {
      first = t.get();
    }
  }
  return first;
}

GuestThread* ThreadTable::requeue_pi_waiter(uint64_t uaddr, uint64_t uaddr2) {
  GuestThread* first = nullptr;
  for (const auto& t : threads_) {
    if (t->state == State::Waiting && t->futex_addr == uaddr && t->requeue_pi_to == uaddr2 &&
        (first == nullptr || t->wait_seq < first->wait_seq)) {
      first = t.get();
    }
  }
  return first;
}

void ThreadTable::wake_due(uint64_t now) {
  for (const auto& t : threads_) {
    if (t->state == State::Waiting && t->deadline <= now) {
      if (t->host_io) {
        // A virtual event of its descriptors (a timerfd's expiry): the call is made again.
        t->state = State::Runnable;
        t->deadline = VirtualTime::kNever;
        t->host_io = false;
        t->child.on = t->recheck = false;
        t->retry = true;
        t->virtual_retry = true;
        continue;
      }
      wake(*t, t->futex_addr != 0 ? -ETIMEDOUT : 0);
    }
  }
}

uint64_t ThreadTable::first_deadline() const {
  uint64_t first = VirtualTime::kNever;
  for (const auto& t : threads_) {
    if (t->state == State::Waiting && t->deadline < first) first = t->deadline;
  }
  return first;
}

bool ThreadTable::others_can_run() const {
  for (size_t i = 0; i < threads_.size(); ++i) {
    const GuestThread& t = *threads_[i];
    if (i == cur_ || t.state == State::Dead) continue;
    if (t.state == State::Runnable || t.host_io || t.deadline != VirtualTime::kNever) {
      return true;
    }
  }
  return false;
}

size_t ThreadTable::next_runnable() const {
  const size_t n = threads_.size();
  for (size_t i = 1; i <= n; ++i) {
    const size_t k = (cur_ + i) % n;
    if (threads_[k]->state == State::Runnable) return k;
  }
  return n;
}

void ThreadTable::drop_dead() {
  for (size_t i = threads_.size(); i-- > 0;) {
    if (i != cur_ && threads_[i]->state == State::Dead) {
      threads_.erase(threads_.begin() + static_cast<std::ptrdiff_t>(i));
      if (i < cur_) --cur_;
    }
  }
}

std::vector<int> ThreadTable::live_tids() const {
  std::vector<int> ids;
  for (const auto& t : threads_) {
    if (t->state != State::Dead) ids.push_back(t->tid);
  }
  return ids;
}

GuestThread* ThreadTable::switched_out(int tid) const {
  for (size_t i = 0; i < threads_.size(); ++i) {
    GuestThread* t = threads_[i].get();
    if (t->tid == tid && t->state != State::Dead && i != cur_) return t;
  }
  return nullptr;
}

const CpuContext* ThreadTable::saved_registers(int tid) const {
  const GuestThread* t = switched_out(tid);
  return t != nullptr ? &t->ctx : nullptr;
}

bool ThreadTable::set_saved_registers(int tid, const CpuContext& regs) {
  GuestThread* t = switched_out(tid);
  if (t != nullptr) t->ctx = regs;
  return t != nullptr;
}

}  // namespace padlock::emu
