// When is a filesystem due for its next pass? Pure functions of the policy,
// the last pass and "now".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "time.hpp"
#include "units.hpp"

namespace trimd {

struct SchedulePolicy {
  Duration interval = std::chrono::hours{24 * 7};
  Duration randomized_delay = std::chrono::hours{1};  // spread passes out, like systemd timers
  Duration first_delay =
      std::chrono::minutes{2};  // never trimmed before: due this soon after start
  Duration overdue_grace = std::chrono::hours{24};  // due + grace: trim gently even while busy
  std::optional<TimeWindow> window;

  bool operator==(const SchedulePolicy&) const = default;
};

// When the next pass is due. `jitter` in [0, 1) picks a point in the
// randomized delay; callers derive it from a stable hash so it does not
// change every time this is asked. Never trimmed (no last_end): started_at +
// first_delay. The result is moved into the window if there is one.
TimePoint next_due(const SchedulePolicy& policy, std::optional<TimePoint> last_end,
                   TimePoint started_at, double jitter);

bool in_window(const std::optional<TimeWindow>& window, TimePoint now);
// The earliest time >= `t` inside the window (t itself without a window).
TimePoint next_window_start(const std::optional<TimeWindow>& window, TimePoint t);

// Overdue: past due by at least the grace period. Then trimd trims gently
// even when the disks never go idle.
bool is_overdue(const SchedulePolicy& policy, TimePoint due, TimePoint now);

// A stable value in [0, 1) from a string (the filesystem id) and a number
// (the last pass end), for `jitter`.
double stable_jitter(const std::string& key, std::int64_t salt);

}  // namespace trimd
