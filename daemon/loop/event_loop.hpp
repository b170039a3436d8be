// One epoll loop for everything: signals, timers, udev, mountinfo, the
// workers' eventfd and the D-Bus connection. All callbacks run on the thread
// that calls run().
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "time.hpp"
#include "unique_fd.hpp"

namespace trimd {

class EventLoop {
 public:
  using Callback = std::function<void(std::uint32_t events)>;

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  void add(int fd, std::uint32_t events, Callback callback);
  void modify(int fd, std::uint32_t events);
  void remove(int fd);
  // Run until quit(); `timeout_ms` of each wait comes from `next_timeout`
  // (-1 = none), asked before every wait.
  void run(const std::function<int()>& next_timeout = {});
  void quit() { running_ = false; }

  // Runs `work` on this loop once the callbacks of the current turn are
  // done, in the order deferred, without a system call (a timer armed for
  // now costs three): for work that many events of one turn ask for once.
  // Work deferred by deferred work runs a turn later, after a look at the
  // fds, so a chain of it cannot starve them.
  void defer(std::function<void()> work) { deferred_.push_back(std::move(work)); }

  // How late the loop has been since it was made: the most a timer waited
  // past its due time before its callback ran (the bus's
  // EventLoopLatenessMaxUSec). Timers report each dispatch.
  Duration lateness_max() const { return lateness_max_; }
  void note_lateness(Duration lateness) { lateness_max_ = std::max(lateness_max_, lateness); }

 private:
  int epoll_fd_;
  bool running_ = false;
  std::map<int, std::shared_ptr<Callback>> callbacks_;
  std::vector<std::function<void()>> deferred_;
  Duration lateness_max_{0};
};

// A timerfd on CLOCK_MONOTONIC armed for a wall-clock deadline: the manager
// speaks wall-clock, the kernel timer must not jump with it. Each dispatch
// tells the loop how long after its due time it came.
class Timer {
 public:
  Timer(EventLoop& loop, std::function<void()> on_fire);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  void arm_at(TimePoint deadline, TimePoint now);
  void arm_in(Duration delay);
  void arm_every(Duration period);
  void disarm();

 private:
  void fired(SteadyPoint now);

  EventLoop& loop_;
  int fd_;
  std::function<void()> on_fire_;
  // The first expiration not yet dispatched (none: disarmed), and the
  // period of arm_every (0: once).
  std::optional<SteadyPoint> due_;
  SteadyClock::duration period_{0};
};

}  // namespace trimd
