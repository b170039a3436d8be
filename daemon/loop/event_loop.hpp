// One epoll loop for everything: signals, timers, udev, mountinfo, the
// workers' eventfd and the D-Bus connection. All callbacks run on the thread
// that calls run().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

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

 private:
  int epoll_fd_;
  bool running_ = false;
  std::map<int, std::shared_ptr<Callback>> callbacks_;
};

// A timerfd on CLOCK_MONOTONIC armed for a wall-clock deadline: the manager
// speaks wall-clock, the kernel timer must not jump with it.
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
  EventLoop& loop_;
  int fd_;
  std::function<void()> on_fire_;
};

}  // namespace trimd
