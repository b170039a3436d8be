// The idleness model. Rates come from the read and write counters only:
// trimd's own discards land in the discard counters, in_flight and io_ticks
// (measured; docs/design.md), so using those would keep a disk "busy" forever
// once trimd starts trimming it.
#include "idleness.hpp"

#include <algorithm>
#include <set>
#include <string_view>

namespace trimd {
namespace {

// The counters the rates are made of. Any of them going down means the
// counters were reset (wrap, or a loop device detached and re-attached).
bool counters_went_back(const DiskCounters& before, const DiskCounters& after) {
  return after.reads_completed < before.reads_completed ||
         after.writes_completed < before.writes_completed ||
         after.sectors_read < before.sectors_read ||
         after.sectors_written < before.sectors_written ||
         after.ms_reading < before.ms_reading || after.ms_writing < before.ms_writing;
}

double per_second(std::uint64_t delta, double seconds) {
  return static_cast<double>(delta) / seconds;
}

DiskActivity rates_between(const DiskCounters& before, const DiskCounters& after,
                           Duration elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const double elapsed_ms = seconds * 1000.0;
  DiskActivity a;
  a.read_iops = per_second(after.reads_completed - before.reads_completed, seconds);
  a.write_iops = per_second(after.writes_completed - before.writes_completed, seconds);
  a.read_bytes_per_sec =
      per_second((after.sectors_read - before.sectors_read) * kDiskstatsSectorBytes, seconds);
  a.write_bytes_per_sec = per_second(
      (after.sectors_written - before.sectors_written) * kDiskstatsSectorBytes, seconds);
  const std::uint64_t busy_ms =
      (after.ms_reading - before.ms_reading) + (after.ms_writing - before.ms_writing);
  a.busy_fraction = static_cast<double>(busy_ms) / elapsed_ms;
  a.in_flight = after.in_flight;
  return a;
}

bool exceeds(const DiskActivity& a, const IdleThresholds& t) {
  return a.read_iops + a.write_iops > t.max_iops ||
         a.read_bytes_per_sec + a.write_bytes_per_sec > t.max_bytes_per_sec ||
         a.busy_fraction > t.max_busy_fraction;
}

// Activity over one interval, or nothing when no time passed (or the wall
// clock stepped back) and no rate can be computed.
std::optional<DiskActivity> interval_activity(const DiskCounters& before, TimePoint before_at,
                                              const DiskCounters& after, TimePoint after_at,
                                              const IdleThresholds& thresholds) {
  const auto elapsed = std::chrono::duration_cast<Duration>(after_at - before_at);
  if (elapsed <= Duration::zero()) return std::nullopt;
  if (counters_went_back(before, after)) {
    // A reset, not a burst: the difference means nothing, so no activity.
    DiskActivity none;
    none.in_flight = after.in_flight;
    return none;
  }
  DiskActivity a = rates_between(before, after, elapsed);
  a.active = exceeds(a, thresholds);
  return a;
}

}  // namespace

IdlenessModel::IdlenessModel(IdleThresholds thresholds) : thresholds_(thresholds) {}

void IdlenessModel::set_thresholds(const IdleThresholds& thresholds) { thresholds_ = thresholds; }

void IdlenessModel::observe(const std::vector<DiskStat>& sample, TimePoint now) {
  std::set<std::string_view> present;
  for (const DiskStat& stat : sample) {
    present.insert(stat.name);
    auto it = disks_.find(stat.name);
    if (it == disks_.end()) {
      // Assume quiet until proven busy: a disk that appears is not known busy.
      disks_.emplace(stat.name, Track{stat.counters, now, std::nullopt, now});
      continue;
    }
    Track& track = it->second;
    if (auto a = interval_activity(track.last, track.last_at, stat.counters, now, thresholds_)) {
      track.activity = a;
      if (a->active)
        track.quiet_since.reset();
      else if (!track.quiet_since)
        track.quiet_since = now;
    } else if (track.quiet_since && *track.quiet_since > now) {
      track.quiet_since = now;  // the wall clock stepped back: never quiet "in the future"
    }
    track.last = stat.counters;
    track.last_at = now;
  }
  // A disk missing from the sample is gone; if it comes back it starts over.
  std::erase_if(disks_, [&](const auto& entry) { return !present.contains(entry.first); });
}

bool IdlenessModel::disk_idle(const std::string& disk, TimePoint now) const {
  const std::optional<TimePoint> since = quiet_since(disk);
  return since && now - *since >= thresholds_.idle_window;
}

bool IdlenessModel::all_idle(const std::vector<std::string>& disks, TimePoint now) const {
  return !disks.empty() &&
         std::all_of(disks.begin(), disks.end(),
                     [&](const std::string& disk) { return disk_idle(disk, now); });
}

std::optional<TimePoint> IdlenessModel::quiet_since(const std::string& disk) const {
  const auto it = disks_.find(disk);
  if (it == disks_.end()) return std::nullopt;
  return it->second.quiet_since;
}

std::optional<DiskActivity> IdlenessModel::activity(const std::string& disk) const {
  const auto it = disks_.find(disk);
  if (it == disks_.end()) return std::nullopt;
  return it->second.activity;
}

std::optional<DiskCounters> IdlenessModel::counters(const std::string& disk) const {
  const auto it = disks_.find(disk);
  if (it == disks_.end()) return std::nullopt;
  return it->second.last;
}

}  // namespace trimd
