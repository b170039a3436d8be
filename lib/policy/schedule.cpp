// When is a filesystem due? Pure functions of the policy, the last pass and
// "now". Daily windows are in local time, like an admin writes them.
#include "schedule.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace trimd {
namespace {

constexpr int kMinutesPerDay = 24 * 60;

// Config may say 24:00 (= 1440) for "until midnight": fold into one day.
int normalized_minute(int minute) {
  return ((minute % kMinutesPerDay) + kMinutesPerDay) % kMinutesPerDay;
}

std::tm local_tm(TimePoint t) {
  const std::time_t seconds = Clock::to_time_t(t);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  return tm;
}

int local_minute_of_day(TimePoint t) {
  const std::tm tm = local_tm(t);
  return tm.tm_hour * 60 + tm.tm_min;
}

// jitter outside [0, 1) (or NaN) would move a pass outside the randomized
// delay: clamp it to the documented range.
double clamped_jitter(double jitter) {
  if (!(jitter > 0.0)) return 0.0;
  return std::min(jitter, std::nextafter(1.0, 0.0));
}

Duration scaled(Duration d, double factor) {
  return std::chrono::duration_cast<Duration>(
      std::chrono::duration<double, Duration::period>(static_cast<double>(d.count()) * factor));
}

// The local time `minute` after midnight, `days_ahead` days after t's day.
// mktime resolves DST: a start inside a DST gap lands just after the gap.
TimePoint local_day_at_minute(TimePoint t, int days_ahead, int minute) {
  std::tm tm = local_tm(t);
  tm.tm_mday += days_ahead;
  tm.tm_hour = minute / 60;
  tm.tm_min = minute % 60;
  tm.tm_sec = 0;
  tm.tm_isdst = -1;
  const std::time_t seconds = std::mktime(&tm);
  // A day past the end of TimePoint's range (year 2262) saturates.
  constexpr auto kLimit = std::chrono::duration_cast<std::chrono::seconds>(Clock::duration::max());
  if (seconds >= kLimit.count()) return TimePoint::max();
  if (seconds <= -kLimit.count()) return TimePoint::min();
  return Clock::from_time_t(seconds);
}

}  // namespace

TimePoint next_due(const SchedulePolicy& policy, std::optional<TimePoint> last_end,
                   TimePoint started_at, double jitter) {
  const double spread = clamped_jitter(jitter);
  TimePoint due;
  if (last_end) {
    due = saturating_add(saturating_add(*last_end, policy.interval),
                         scaled(policy.randomized_delay, spread));
  } else {
    // Never trimmed: soon after start, but several filesystems should still
    // not all start at once; the spread never exceeds the first delay.
    const Duration spread_cap = std::min(policy.randomized_delay, policy.first_delay);
    due =
        saturating_add(saturating_add(started_at, policy.first_delay), scaled(spread_cap, spread));
  }
  return next_window_start(policy.window, due);
}

bool in_window(const std::optional<TimeWindow>& window, TimePoint now) {
  if (!window) return true;
  const int start = normalized_minute(window->start_minute);
  const int end = normalized_minute(window->end_minute);
  if (start == end) return true;
  const int minute = local_minute_of_day(now);
  if (start < end) return minute >= start && minute < end;
  return minute >= start || minute < end;  // wraps midnight
}

TimePoint next_window_start(const std::optional<TimeWindow>& window, TimePoint t) {
  if (in_window(window, t)) return t;
  const int start = normalized_minute(window->start_minute);
  const TimePoint today = local_day_at_minute(t, 0, start);
  return today > t ? today : local_day_at_minute(t, 1, start);
}

bool is_overdue(const SchedulePolicy& policy, TimePoint due, TimePoint now) {
  return now >= saturating_add(due, policy.overdue_grace);
}

double stable_jitter(const std::string& key, std::int64_t salt) {
  // FNV-1a, 64 bit: stable across runs, builds and machines (std::hash is not).
  constexpr std::uint64_t kOffsetBasis = 14695981039346656037ULL;
  constexpr std::uint64_t kPrime = 1099511628211ULL;
  std::uint64_t hash = kOffsetBasis;
  auto mix = [&](std::uint8_t byte) { hash = (hash ^ byte) * kPrime; };
  for (const char c : key) mix(static_cast<std::uint8_t>(c));
  const auto salt_bits = static_cast<std::uint64_t>(salt);
  for (int shift = 0; shift < 64; shift += 8) mix(static_cast<std::uint8_t>(salt_bits >> shift));
  // The top 53 bits fill a double's mantissa exactly: the result is < 1.
  return static_cast<double>(hash >> 11) * 0x1.0p-53;
}

}  // namespace trimd
