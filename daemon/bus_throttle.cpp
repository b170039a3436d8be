#include "bus_throttle.hpp"

namespace trimd::bus {

bool Throttle::try_send(Clock::time_point now) {
  if (wait(now) > Clock::duration::zero()) return false;
  last_sent_ = now;
  sent_before_ = true;
  return true;
}

Throttle::Clock::duration Throttle::wait(Clock::time_point now) const {
  if (!sent_before_) return Clock::duration::zero();
  const auto next = last_sent_ + interval_;
  return next > now ? next - now : Clock::duration::zero();
}

}  // namespace trimd::bus
