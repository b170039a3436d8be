// Time types shared by the engine. Everything that depends on "now" takes it
// as an argument, so tests drive the engine with a fake clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace trimd {

// Wall-clock time: persisted in the state file, compared with daily windows.
using Clock = std::chrono::system_clock;
using TimePoint = Clock::time_point;
using Duration = std::chrono::microseconds;
// Monotonic time: pacing between chunks and backoff, which must not stall
// or rush when the wall clock is stepped.
using SteadyClock = std::chrono::steady_clock;
using SteadyPoint = SteadyClock::time_point;

inline std::int64_t to_usec(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}
inline TimePoint from_usec(std::int64_t usec) {
  return TimePoint{std::chrono::duration_cast<Clock::duration>(std::chrono::microseconds{usec})};
}

}  // namespace trimd
