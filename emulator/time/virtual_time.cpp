#include "emulator/time/virtual_time.hpp"

#include <algorithm>
#include <cmath>

namespace padlock::emu {

namespace {
int64_t host_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

VirtualTime::VirtualTime(const VirtualTimeConfig& c) : cfg_(c) {
  if (cfg_.mhz <= 0) cfg_.mhz = 1600;
  rng_ = cfg_.seed ^ 0x697271206D6F6465ull;  // "irq mode"
  // The guest's clocks start at the host's, truncated to a whole second: a difference of
  // two readings rounded to microseconds (gettimeofday) then depends on the modelled
  // cycles only, not on where in a second the run started (docs/timing.md).
  constexpr int64_t kSecond = 1000000000;
  realtime0_ns_ = host_ns(CLOCK_REALTIME) / kSecond * kSecond;
  monotonic0_ns_ = host_ns(CLOCK_MONOTONIC) / kSecond * kSecond;
  schedule_irq();
  recompute();
}

uint64_t VirtualTime::ns_of(uint64_t cycles) const {
  return static_cast<uint64_t>(static_cast<long double>(cycles) * 1000.0L / cfg_.mhz);
}

uint64_t VirtualTime::cycles_of_ns(uint64_t ns) const {
  const long double c = static_cast<long double>(ns) * cfg_.mhz / 1000.0L;
  return c >= 1.8e19L ? kNever : static_cast<uint64_t>(std::ceil(c));
}

uint64_t VirtualTime::splitmix() {
  uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Periodic at irq_hz with a uniform jitter of +-irq_jitter of the period, from the seed.
void VirtualTime::schedule_irq() {
  if (!cfg_.enabled || cfg_.irq_hz <= 0) {
    next_irq_ = kNever;
    return;
  }
  const double period = cfg_.mhz * 1e6 / cfg_.irq_hz;
  const double u = static_cast<double>(splitmix() >> 11) / 9007199254740992.0;  // [0,1)
  const double d = period * (1.0 + cfg_.irq_jitter * (2 * u - 1));
  const uint64_t base = next_irq_ == kNever ? now_ : next_irq_;
  next_irq_ = base + std::max<uint64_t>(1, static_cast<uint64_t>(d));
}

unsigned VirtualTime::take_irqs() {
  unsigned n = 0;
  while (next_irq_ != kNever && next_irq_ <= now_) {
    ++n;
    ++irqs_;
    irq_cycles_total_ += cfg_.irq_cycles;
    now_ += cfg_.irq_cycles;
    schedule_irq();
    // A long stall (sleep) may have skipped many periods: the handler runs once per tick.
    if (n > 1000000) break;
  }
  recompute();
  return n;
}

bool VirtualTime::clock_ns(int id, int64_t& ns) const {
  if (!cfg_.enabled) {
    timespec ts{};
    if (clock_gettime(static_cast<clockid_t>(id), &ts) != 0) return false;
    ns = int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    return true;
  }
  const int64_t e = static_cast<int64_t>(ns_of(now_));
  switch (id) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case 11:  // CLOCK_TAI
      ns = realtime0_ns_ + e;
      return true;
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
      ns = monotonic0_ns_ + e;
      return true;
    case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID:
      ns = static_cast<int64_t>(ns_of(now_ - std::min(now_, idle_)));
      return true;
    default:
      return false;
  }
}

int64_t VirtualTime::cpu_ns() const {
  if (!cfg_.enabled) return host_ns(CLOCK_PROCESS_CPUTIME_ID);
  return static_cast<int64_t>(ns_of(now_ - std::min(now_, idle_)));
}

void VirtualTime::arm(int i, uint64_t value, uint64_t interval, int signo, int code) {
  VirtualTimer& t = timers_[i];
  t.signo = signo;
  t.code = code;
  t.overrun = 0;
  if (value == 0) {
    t.armed = false;
    t.deadline = 0;
    t.interval = 0;
  } else {
    t.armed = true;
    t.deadline = now_ + value;
    t.interval = interval;
  }
  recompute();
}

uint64_t VirtualTime::remaining(int i) const {
  const VirtualTimer& t = timers_[i];
  if (!t.armed) return 0;
  return t.deadline > now_ ? t.deadline - now_ : 1;
}

uint64_t VirtualTime::next_timer() const {
  uint64_t m = kNever;
  for (const VirtualTimer& t : timers_)
    if (t.armed) m = std::min(m, t.deadline);
  return m;
}

void VirtualTime::recompute() {
  next_event_ = std::min({next_irq_, next_timer(), slice_end_});
}

int VirtualTime::posix_alloc() {
  for (int i = 0; i < kPosixTimers; ++i) {
    if (!posix_used_[i]) {
      posix_used_[i] = true;
      timers_[posix_index(i)] = VirtualTimer{};
      return i;
    }
  }
  return -1;
}

void VirtualTime::posix_free(int id) {
  posix_used_[id] = false;
  timers_[posix_index(id)] = VirtualTimer{};
  recompute();
}

}  // namespace padlock::emu
