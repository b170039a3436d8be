#include "event_loop.hpp"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>
#include <vector>

#include "errno_error.hpp"

namespace trimd {

namespace {

// 0 would disarm the timer: the shortest delay is 1 usec.
Duration at_least_one_usec(Duration d) { return std::max(d, Duration{1}); }

timespec to_timespec(Duration d) {
  const auto usec = at_least_one_usec(d).count();
  return timespec{static_cast<time_t>(usec / 1000000), static_cast<long>(usec % 1000000) * 1000};
}

}  // namespace

EventLoop::EventLoop() : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {
  if (epoll_fd_ < 0) throw_errno("epoll_create1");
}

EventLoop::~EventLoop() { ::close(epoll_fd_); }

void EventLoop::add(int fd, std::uint32_t events, Callback callback) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) throw_errno("epoll_ctl(ADD)");
  callbacks_[fd] = std::make_shared<Callback>(std::move(callback));
}

void EventLoop::modify(int fd, std::uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) < 0) throw_errno("epoll_ctl(MOD)");
}

void EventLoop::remove(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  callbacks_.erase(fd);
}

void EventLoop::run(const std::function<int()>& next_timeout) {
  running_ = true;
  std::vector<epoll_event> events(16);
  while (running_) {
    const int timeout = !deferred_.empty() ? 0 : next_timeout ? next_timeout() : -1;
    const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("epoll_wait");
    }
    for (int i = 0; i < n && running_; ++i) {
      auto it = callbacks_.find(events[static_cast<std::size_t>(i)].data.fd);
      if (it == callbacks_.end()) continue;
      auto callback = it->second;  // survives remove() from inside itself
      (*callback)(events[static_cast<std::size_t>(i)].events);
    }
    for (auto& work : std::exchange(deferred_, {})) work();  // even after quit(): nothing is lost
  }
}

Timer::Timer(EventLoop& loop, std::function<void()> on_fire)
    : loop_(loop), fd_(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)),
      on_fire_(std::move(on_fire)) {
  if (fd_ < 0) throw_errno("timerfd_create");
  loop_.add(fd_, EPOLLIN, [this](std::uint32_t) { fired(SteadyClock::now()); });
}

void Timer::fired(SteadyPoint now) {
  std::uint64_t expirations;
  if (::read(fd_, &expirations, sizeof expirations) != sizeof expirations) return;
  if (due_) {
    loop_.note_lateness(std::chrono::duration_cast<Duration>(now - *due_));
    if (period_ > SteadyClock::duration::zero())
      *due_ += period_ * static_cast<SteadyClock::rep>(expirations);
    else
      due_.reset();
  }
  on_fire_();
}

Timer::~Timer() {
  loop_.remove(fd_);
  ::close(fd_);
}

void Timer::arm_at(TimePoint deadline, TimePoint now) {
  arm_in(std::chrono::duration_cast<Duration>(deadline - now));
}

// The due time is taken before the kernel's: a lateness is never less than real.
void Timer::arm_in(Duration delay) {
  const SteadyPoint now = SteadyClock::now();
  itimerspec spec{};
  spec.it_value = to_timespec(delay);
  if (timerfd_settime(fd_, 0, &spec, nullptr) < 0) throw_errno("timerfd_settime");
  due_ = now + at_least_one_usec(delay);
  period_ = SteadyClock::duration::zero();
}

void Timer::arm_every(Duration period) {
  const SteadyPoint now = SteadyClock::now();
  itimerspec spec{};
  spec.it_value = to_timespec(period);
  spec.it_interval = to_timespec(period);
  if (timerfd_settime(fd_, 0, &spec, nullptr) < 0) throw_errno("timerfd_settime");
  due_ = now + at_least_one_usec(period);
  period_ = at_least_one_usec(period);
}

void Timer::disarm() {
  itimerspec spec{};
  if (timerfd_settime(fd_, 0, &spec, nullptr) < 0) throw_errno("timerfd_settime");
  due_.reset();
}

}  // namespace trimd
