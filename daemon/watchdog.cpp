#include "watchdog.hpp"

#include <systemd/sd-daemon.h>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace trimd {

namespace {

// WATCHDOG_USEC, if it is meant for this process (WATCHDOG_PID).
std::optional<Duration> watchdog_interval_from_systemd() {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return Duration{static_cast<Duration::rep>(usec)};
}

}  // namespace

Watchdog::Watchdog(EventLoop& loop, Duration keepalive_every)
    : timer_(loop, [] { sd_notify(0, "WATCHDOG=1"); }) {
  sd_notify(0, "WATCHDOG=1");
  timer_.arm_every(keepalive_every);
}

std::optional<Duration> keepalive_interval(std::optional<Duration> watchdog_interval) {
  if (!watchdog_interval || watchdog_interval->count() <= 0) return std::nullopt;
  return std::max(*watchdog_interval / 2, Duration{1});
}

std::unique_ptr<Watchdog> start_watchdog(EventLoop& loop) {
  const auto every = keepalive_interval(watchdog_interval_from_systemd());
  if (!every) return nullptr;
  spdlog::debug("watchdog keep-alive every {} us", every->count());
  return std::make_unique<Watchdog>(loop, *every);
}

}  // namespace trimd
