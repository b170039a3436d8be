// systemd's watchdog (WatchdogSec=): keep-alives sent from the event loop
// itself, so that a wedged loop stops them and systemd restarts trimd.
// FITRIM runs in child processes, never on the loop, so a long call in the
// kernel cannot starve the keep-alives.
#pragma once

#include <memory>
#include <optional>

#include "event_loop.hpp"
#include "time.hpp"

namespace trimd {

class Watchdog {
 public:
  Watchdog(EventLoop& loop, Duration keepalive_every);

 private:
  Timer timer_;
};

// How often to send WATCHDOG=1: half the interval systemd asked for, as
// sd_watchdog_enabled(3) advises. Nothing when the watchdog is off.
std::optional<Duration> keepalive_interval(std::optional<Duration> watchdog_interval);

// A Watchdog when systemd enabled one for this process, else nullptr.
std::unique_ptr<Watchdog> start_watchdog(EventLoop& loop);

}  // namespace trimd
