// Parser for /proc/diskstats. The line format is documented in the kernel's
// Documentation/admin-guide/iostats.rst: major, minor, name, then 11 counters
// (all kernels), 4 discard counters (4.18+) and 2 flush counters (5.5+).
#include "diskstats.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <optional>

#include "text_fields.hpp"

namespace trimd {
namespace {

constexpr std::size_t kIdentityFields = 3;
constexpr std::size_t kBaseCounters = 11;
constexpr std::size_t kDiscardCounters = 4;
constexpr std::size_t kFlushCounters = 2;
constexpr std::size_t kAllCounters = kBaseCounters + kDiscardCounters + kFlushCounters;

// The counters in kernel order, so that one loop fills the struct.
std::array<std::uint64_t*, kAllCounters> counter_slots(DiskCounters& c) {
  return {&c.reads_completed,  &c.reads_merged,      &c.sectors_read,    &c.ms_reading,
          &c.writes_completed, &c.writes_merged,     &c.sectors_written, &c.ms_writing,
          &c.in_flight,        &c.io_ticks_ms,       &c.weighted_ms,     &c.discards_completed,
          &c.discards_merged,  &c.sectors_discarded, &c.ms_discarding,   &c.flushes_completed,
          &c.ms_flushing};
}

// How many counters this kernel's line carries: an odd count (a format we
// do not know) is read up to the last complete group.
std::size_t known_counter_count(std::size_t counters_on_line) {
  if (counters_on_line >= kAllCounters) return kAllCounters;
  if (counters_on_line >= kBaseCounters + kDiscardCounters) return kBaseCounters + kDiscardCounters;
  return kBaseCounters;
}

std::optional<DiskStat> parse_line(std::string_view line) {
  const std::vector<std::string_view> fields = split_fields(line, " \t\r");
  if (fields.size() < kIdentityFields + kBaseCounters) return std::nullopt;

  DiskStat stat;
  const auto major = parse_whole_number<unsigned>(fields[0]);
  const auto minor = parse_whole_number<unsigned>(fields[1]);
  if (!major || !minor) return std::nullopt;
  stat.major = *major;
  stat.minor = *minor;
  stat.name = std::string(fields[2]);

  const auto slots = counter_slots(stat.counters);
  const std::size_t count = known_counter_count(fields.size() - kIdentityFields);
  for (std::size_t i = 0; i < count; ++i) {
    const auto value = parse_whole_number<std::uint64_t>(fields[kIdentityFields + i]);
    if (!value) return std::nullopt;
    *slots[i] = *value;
  }
  return stat;
}

}  // namespace

std::vector<DiskStat> parse_diskstats(std::string_view text) {
  std::vector<DiskStat> stats;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (auto stat = parse_line(text.substr(pos, end - pos))) stats.push_back(std::move(*stat));
    pos = end + 1;
  }
  return stats;
}

}  // namespace trimd
