// How much of the event loop an attack takes: a timer every 10 ms notes how
// late it fires (wall time, which a loaded machine's scheduler also
// spends) and how much CPU the loop's thread spent since the last fire (the
// loop's own work between two turns, which no scheduler inflates). The
// bound the fleet keeps is on the second; the first is reported.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "event_loop.hpp"

namespace trimd::test {

class LoopProbe {
 public:
  explicit LoopProbe(EventLoop& loop, Duration period = std::chrono::milliseconds{10})
      : period_(period), timer_(loop, [this] { fire(); }) {
    last_cpu_ = thread_cpu();
    due_ = std::chrono::steady_clock::now() + period_;
    timer_.arm_every(period_);
  }

  // Forget what was measured: the thread's CPU from here on (a test that
  // ran other work on this thread in between, say an etcd peer's calls).
  void reset() {
    last_cpu_ = thread_cpu();
    due_ = std::chrono::steady_clock::now() + period_;
    longest_busy_ = latest_ = Duration{};
  }

  // The most CPU the loop's thread spent between two fires of the probe.
  Duration longest_busy() const { return longest_busy_; }
  // The most a fire came after its due time.
  Duration latest() const { return latest_; }

 private:
  static Duration thread_cpu() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return std::chrono::duration_cast<Duration>(std::chrono::seconds{now.tv_sec} +
                                                std::chrono::nanoseconds{now.tv_nsec});
  }
  void fire() {
    const auto now = std::chrono::steady_clock::now();
    const auto cpu = thread_cpu();
    longest_busy_ = std::max(longest_busy_, cpu - last_cpu_);
    latest_ = std::max(latest_, std::chrono::duration_cast<Duration>(now - due_));
    last_cpu_ = cpu;
    due_ = now + period_;
  }

  Duration period_;
  Timer timer_;
  Duration last_cpu_{};
  std::chrono::steady_clock::time_point due_;
  Duration longest_busy_{};
  Duration latest_{};
};

// This process's peak resident memory (VmHWM) and its open files.
inline std::size_t peak_rss_bytes(const std::string& pid = "self") {
  std::ifstream status("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
  return 0;
}

inline std::size_t open_files(const std::string& pid = "self") {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + pid + "/fd")) {
    (void)entry;
    ++count;
  }
  return count;
}

}  // namespace trimd::test
