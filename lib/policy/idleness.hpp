// The idleness model: from successive /proc/diskstats samples, decide whether
// a disk has been quiet long enough to trim it. Only reads and writes count:
// trimd's own discards show up in the discard fields, in_flight and io_ticks,
// and must not make a disk look busy.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diskstats.hpp"
#include "preemption.hpp"
#include "time.hpp"

namespace trimd {

struct IdleThresholds {
  double max_iops = 20.0;                      // reads + writes completed per second
  double max_bytes_per_sec = 1024.0 * 1024.0;  // read + write throughput
  double max_busy_fraction = 0.05;             // (ms_reading + ms_writing) per ms of wall time
  // Quiet for this long = idle. Longer than the kernel's own writes after a
  // burst (metadata written back 30-35 s after it was dirtied, xfs covering
  // its log 30 s apart), so that they restart the window instead of killing
  // the pass's first chunk (docs/preemption.md, "The idle window").
  Duration idle_window = std::chrono::seconds{40};

  bool operator==(const IdleThresholds&) const = default;
};

// Which limit keeps a disk from being idle.
enum class IdleLimit {
  Iops,        // max_iops
  Throughput,  // max_bytes_per_sec
  BusyTime,    // max_busy_fraction
  Settling,    // below every limit, but not yet for the whole idle window
  Unseen,      // not in /proc/diskstats (yet)
};
const char* to_string(IdleLimit limit);

struct BusyDisk {
  std::string disk;
  IdleLimit limit = IdleLimit::Unseen;
};

struct DiskActivity {
  double read_iops = 0;
  double write_iops = 0;
  double read_bytes_per_sec = 0;
  double write_bytes_per_sec = 0;
  double busy_fraction = 0;
  std::uint64_t in_flight = 0;
  bool active = false;                    // above any threshold in the last interval
  IdleLimit limit = IdleLimit::Settling;  // the first threshold crossed, when active
};

class IdlenessModel {
 public:
  explicit IdlenessModel(IdleThresholds thresholds = {});
  void set_thresholds(const IdleThresholds& thresholds);
  const IdleThresholds& thresholds() const { return thresholds_; }

  // Feed one full sample of /proc/diskstats taken at `now`. `own` is what
  // trimd's FITRIM runners read and wrote per disk since the last sample:
  // taken out of the disk's reads and writes (lib/policy/preemption.hpp), so
  // trimd's own bitmap reads never make a disk look busy.
  void observe(const std::vector<DiskStat>& sample, TimePoint now,
               const std::map<std::string, IoBytes>& own = {});
  // Foreground I/O was seen on these disks at `now` (a chunk was preempted):
  // they are idle again only after a whole idle window from the next sample.
  void mark_busy(const std::vector<std::string>& disks, TimePoint now);

  // A disk is idle when it has been seen and its activity has stayed below
  // every threshold for at least the idle window. A disk never seen is not.
  bool disk_idle(const std::string& disk, TimePoint now) const;
  // True when every named disk is idle (false for an empty list).
  bool all_idle(const std::vector<std::string>& disks, TimePoint now) const;
  // The first of `disks` that is not idle, and why; nothing when all are.
  std::optional<BusyDisk> first_busy(const std::vector<std::string>& disks, TimePoint now) const;
  // Since when the disk has been quiet (nothing when active in the last sample
  // or never seen).
  std::optional<TimePoint> quiet_since(const std::string& disk) const;
  // Rates from the last two samples; nothing until two samples were seen.
  std::optional<DiskActivity> activity(const std::string& disk) const;
  // Latest raw counters for a disk.
  std::optional<DiskCounters> counters(const std::string& disk) const;

 private:
  struct Track {
    DiskCounters last;
    TimePoint last_at;
    std::optional<DiskActivity> activity;
    std::optional<TimePoint> quiet_since;
  };
  IdleThresholds thresholds_;
  std::map<std::string, Track, std::less<>> disks_;
};

}  // namespace trimd
