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
         after.sectors_written < before.sectors_written || after.ms_reading < before.ms_reading ||
         after.ms_writing < before.ms_writing;
}

double per_second(std::uint64_t delta, double seconds) {
  return static_cast<double>(delta) / seconds;
}

// The runner's own I/O is taken out of the bytes and operations; its share
// of the busy time goes too, in proportion to the operations it made.
DiskActivity rates_between(const DiskCounters& before, const DiskCounters& after, Duration elapsed,
                           IoBytes own) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const double elapsed_ms = seconds * 1000.0;
  const ForegroundIo io = foreground_io(before, after, own);
  DiskActivity a;
  a.read_iops = io.read_ops / seconds;
  a.write_iops = io.write_ops / seconds;
  a.read_bytes_per_sec = per_second(io.read_bytes, seconds);
  a.write_bytes_per_sec = per_second(io.write_bytes, seconds);
  const double ops = static_cast<double>((after.reads_completed - before.reads_completed) +
                                         (after.writes_completed - before.writes_completed));
  const double share = ops > 0 ? (io.read_ops + io.write_ops) / ops : 1.0;
  const std::uint64_t busy_ms =
      (after.ms_reading - before.ms_reading) + (after.ms_writing - before.ms_writing);
  a.busy_fraction = static_cast<double>(busy_ms) * share / elapsed_ms;
  a.in_flight = after.in_flight;
  return a;
}

// The first threshold `a` crosses, or nothing.
std::optional<IdleLimit> exceeded(const DiskActivity& a, const IdleThresholds& t) {
  if (a.read_iops + a.write_iops > t.max_iops) return IdleLimit::Iops;
  if (a.read_bytes_per_sec + a.write_bytes_per_sec > t.max_bytes_per_sec)
    return IdleLimit::Throughput;
  // The busy time is the sum of the I/Os' waits: with a deep queue it passes
  // the wall time, so 1, "always busy is still idle", turns the check off.
  if (t.max_busy_fraction < 1 && a.busy_fraction > t.max_busy_fraction) return IdleLimit::BusyTime;
  return std::nullopt;
}

// Activity over one interval, or nothing when no time passed (or the wall
// clock stepped back) and no rate can be computed.
std::optional<DiskActivity> interval_activity(const DiskCounters& before, TimePoint before_at,
                                              const DiskCounters& after, TimePoint after_at,
                                              const IdleThresholds& thresholds, IoBytes own) {
  const auto elapsed = std::chrono::duration_cast<Duration>(after_at - before_at);
  if (elapsed <= Duration::zero()) return std::nullopt;
  if (counters_went_back(before, after)) {
    // A reset, not a burst: the difference means nothing, so no activity.
    DiskActivity none;
    none.in_flight = after.in_flight;
    return none;
  }
  DiskActivity a = rates_between(before, after, elapsed, own);
  if (auto limit = exceeded(a, thresholds)) {
    a.active = true;
    a.limit = *limit;
  }
  return a;
}

IoBytes own_io_of(const std::map<std::string, IoBytes>& own, const std::string& disk) {
  const auto it = own.find(disk);
  return it == own.end() ? IoBytes{} : it->second;
}

}  // namespace

const char* to_string(IdleLimit limit) {
  switch (limit) {
    // The [idle] keys an admin would change, by their names in trimd.toml.
    case IdleLimit::Iops: return "IOPS above max_iops";
    case IdleLimit::Throughput: return "throughput above max_throughput";
    case IdleLimit::BusyTime: return "busy time above max_busy";
    case IdleLimit::Settling: return "quiet for less than the idle window";
    case IdleLimit::Unseen: return "not in /proc/diskstats";
  }
  return "unknown";
}

IdlenessModel::IdlenessModel(IdleThresholds thresholds) : thresholds_(thresholds) {}

void IdlenessModel::set_thresholds(const IdleThresholds& thresholds) { thresholds_ = thresholds; }

void IdlenessModel::observe(const std::vector<DiskStat>& sample, TimePoint now,
                            const std::map<std::string, IoBytes>& own) {
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
    if (auto a = interval_activity(track.last, track.last_at, stat.counters, now, thresholds_,
                                   own_io_of(own, stat.name))) {
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

void IdlenessModel::mark_busy(const std::vector<std::string>& disks, TimePoint now) {
  for (const std::string& disk : disks) {
    auto it = disks_.find(disk);
    if (it == disks_.end()) continue;
    // Quiet again from the next sample on, at the earliest.
    if (!it->second.quiet_since || *it->second.quiet_since <= now) it->second.quiet_since.reset();
  }
}

std::optional<BusyDisk> IdlenessModel::first_busy(const std::vector<std::string>& disks,
                                                  TimePoint now) const {
  for (const std::string& disk : disks) {
    if (disk_idle(disk, now)) continue;
    const auto it = disks_.find(disk);
    if (it == disks_.end()) return BusyDisk{disk, IdleLimit::Unseen};
    const auto& a = it->second.activity;
    return BusyDisk{disk, a && a->active ? a->limit : IdleLimit::Settling};
  }
  if (disks.empty()) return BusyDisk{"", IdleLimit::Unseen};
  return std::nullopt;
}

bool IdlenessModel::disk_idle(const std::string& disk, TimePoint now) const {
  const std::optional<TimePoint> since = quiet_since(disk);
  return since && now - *since >= thresholds_.idle_window;
}

bool IdlenessModel::all_idle(const std::vector<std::string>& disks, TimePoint now) const {
  return !disks.empty() && std::all_of(disks.begin(), disks.end(), [&](const std::string& disk) {
    return disk_idle(disk, now);
  });
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
