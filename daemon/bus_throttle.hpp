// How often Progress may be announced (which properties a change touches is
// in bus_property_table.hpp). Pure: unit-tested without a bus.
#pragma once

#include <chrono>

namespace trimd::bus {

// At most one announcement per `interval`; the rest wait and are coalesced.
class Throttle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Throttle(Clock::duration interval) : interval_(interval) {}
  // True when a value may go out at `now`, and then counts it as sent.
  bool try_send(Clock::time_point now);
  // How long after `now` the next value may go out (0 = right away).
  Clock::duration wait(Clock::time_point now) const;

 private:
  Clock::duration interval_;
  Clock::time_point last_sent_{};
  bool sent_before_ = false;
};

}  // namespace trimd::bus
