// Parser for /proc/diskstats (14, 18 and 20 field variants).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trimd {

struct DiskCounters {
  std::uint64_t reads_completed = 0;
  std::uint64_t reads_merged = 0;
  std::uint64_t sectors_read = 0;
  std::uint64_t ms_reading = 0;
  std::uint64_t writes_completed = 0;
  std::uint64_t writes_merged = 0;
  std::uint64_t sectors_written = 0;
  std::uint64_t ms_writing = 0;
  std::uint64_t in_flight = 0;    // includes discards: not a sign of foreground I/O
  std::uint64_t io_ticks_ms = 0;  // includes discard time, likewise
  std::uint64_t weighted_ms = 0;
  std::uint64_t discards_completed = 0;  // 0 on kernels older than 4.18
  std::uint64_t discards_merged = 0;
  std::uint64_t sectors_discarded = 0;
  std::uint64_t ms_discarding = 0;
  std::uint64_t flushes_completed = 0;  // 0 on kernels older than 5.5
  std::uint64_t ms_flushing = 0;
};

struct DiskStat {
  unsigned major = 0;
  unsigned minor = 0;
  std::string name;
  DiskCounters counters;
};

// Lines with too few fields or non-numeric counters are skipped; counters
// beyond the 17 known ones (future kernels) are ignored.
std::vector<DiskStat> parse_diskstats(std::string_view text);

// Sectors in /proc/diskstats are always 512 bytes, whatever the device.
constexpr std::uint64_t kDiskstatsSectorBytes = 512;

}  // namespace trimd
