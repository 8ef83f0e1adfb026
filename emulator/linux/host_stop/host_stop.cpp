#include "emulator/linux/host_stop/host_stop.hpp"

#include <chrono>

namespace padlock::emu {

void HostStop::kill() {
  killed_.store(true);
  flag_.store(true);
  stop_cpu_(false);
}

void HostStop::start_deadline(double seconds) {
  deadline_.start(
      RunDeadline::Clock::now() + std::chrono::duration_cast<RunDeadline::Clock::duration>(
                                      std::chrono::duration<double>(seconds)),
      [this] { on_deadline(); });
}

void HostStop::on_deadline() {
  out_of_time_.store(true);
  flag_.store(true);
  // As a host signal's handler stops it: kept for a start that has not begun yet.
  stop_cpu_(true);
}

}  // namespace padlock::emu
