// Time types shared by the engine. Everything that depends on "now" takes it
// as an argument, so tests drive the engine with a fake clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <ratio>

namespace trimd {

// Wall-clock time: persisted in the state file, compared with daily windows.
using Clock = std::chrono::system_clock;
using TimePoint = Clock::time_point;
using Duration = std::chrono::microseconds;
// Monotonic time: pacing between chunks and backoff, which must not stall
// or rush when the wall clock is stepped.
using SteadyClock = std::chrono::steady_clock;
using SteadyPoint = SteadyClock::time_point;

// A TimePoint counts nanoseconds in 64 bits (about +-292 years around 1970)
// while a Duration counts microseconds (+-292,000 years): where a parsed or
// persisted value meets a clock, these saturate at the ends of TimePoint's
// range instead of overflowing (undefined behaviour, and a date in 1716).
inline TimePoint saturating_add(TimePoint t, Duration d) {
  using Tick = Clock::duration;
  using PerUsec = std::ratio_divide<Duration::period, Tick::period>;
  static_assert(PerUsec::den == 1, "a microsecond is a whole number of clock ticks");
  Tick::rep ticks = 0;
  Tick::rep sum = 0;
  if (__builtin_mul_overflow(d.count(), static_cast<Tick::rep>(PerUsec::num), &ticks) ||
      __builtin_add_overflow(t.time_since_epoch().count(), ticks, &sum))
    return d.count() > 0 ? TimePoint::max() : TimePoint::min();
  return TimePoint{Tick{sum}};
}

inline TimePoint saturating_sub(TimePoint t, Duration d) {
  if (d.count() == std::numeric_limits<Duration::rep>::min()) return TimePoint::max();
  return saturating_add(t, Duration{-d.count()});
}

inline std::int64_t to_usec(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}
// Saturates outside TimePoint's range (see saturating_add).
inline TimePoint from_usec(std::int64_t usec) {
  return saturating_add(TimePoint{}, Duration{usec});
}

// The longest duration a configuration may set, and the latest time a state
// file may hold: far enough for any real policy, and far enough from the
// end of TimePoint's range that adding one to the other cannot reach it.
inline constexpr Duration kMaxPolicyDuration = std::chrono::hours{24 * 3653};  // 10 years
inline constexpr std::int64_t kLatestStoredUsec = 7258118400LL * 1'000'000;    // 2200-01-01

}  // namespace trimd
