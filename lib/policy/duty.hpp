// The discard-time budget ([trim] duty, [fleet] duty): the share of wall time
// a filesystem's passes may keep the device busy with discards, and the pause
// after each chunk that holds them to it (docs/duty.md). Pure arithmetic on
// values and "now": nothing here reads a clock.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "time.hpp"

namespace trimd {

// The least budget a policy may set ("0" is none): one part in ten thousand.
inline constexpr double kMinDuty = 0.0001;
// The longest pause one chunk earns. A call stuck for 10 minutes at 0.01%
// would otherwise hold the next chunk for 69 days.
inline constexpr Duration kMaxDutyPause = std::chrono::hours{24};

// The budget a filesystem's chunks are held to.
struct DutyBudget {
  double share = 0;  // of `of`'s time; 0 = no budget
  std::string of;    // whose time, for people: the backend ([fleet]) or the disks ([trim])
  bool operator==(const DutyBudget&) const = default;
};

// The stricter of [trim] duty, a share of the filesystem's `disks`' time,
// and, for a filesystem coordinated on `backend`, its slot's part of [fleet]
// duty (fleet_duty / max_concurrent: the holders of the slots share the
// backend's budget). No budget when neither is set.
DutyBudget duty_budget(double trim_duty, std::string_view disks, double fleet_duty,
                       unsigned max_concurrent, std::string_view backend);

// What a chunk cost its device: the time its devices spent on its discards
// (/proc/diskstats) where they count discards, never more than `span`, the
// time from the chunk's start until its discards completed (several
// discards in flight at once count once); `span` where they count none
// (the chunk then ran on disks with no foreground I/O, so its span is the
// device's time).
Duration chunk_device_time(Duration span, std::optional<Duration> discard_time);

// The pause after a chunk that kept its device busy for `busy`, so that
// busy / (busy + pause) is `share`: busy x (1/share - 1), at most
// kMaxDutyPause; 0 without a budget.
Duration duty_pause(Duration busy, double share);

// The pause a budget imposes: when the next chunk may start, on the
// monotonic clock (pacing) and on the wall clock (what people read).
struct DutyPause {
  SteadyPoint until{};
  TimePoint wall_until{};
  DutyBudget budget;
};

// "pacing: 1% of pool-a's time, next chunk in 3min 12s": `left` is rounded
// up to whole seconds, `next` names what waits ("next chunk", "slot handed
// on").
std::string pacing_text(const DutyBudget& budget, Duration left,
                        std::string_view next = "next chunk");

}  // namespace trimd
