// Human units: sizes, durations and daily windows as admins write them in
// trimd.toml and trimctl's arguments, and as trimd and trimctl print them.
// One reading for every edge, so "1.5TiB" means the same everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "time.hpp"

namespace trimd {

// A daily window in local time, [start, end) in minutes after midnight.
// start > end wraps midnight (22:00-06:00). start == end means all day.
struct TimeWindow {
  int start_minute = 0;
  int end_minute = 0;

  bool operator==(const TimeWindow&) const = default;
};

// Throw std::invalid_argument with a readable message.
std::uint64_t parse_size(std::string_view text);      // "256MiB", "1G", "4096", "0"
Duration parse_duration(std::string_view text);       // "30s", "100ms", "1w", "1h30min", "2d"
TimeWindow parse_time_window(std::string_view text);  // "01:00-06:00"
// A share of time as a fraction of 1: "2%" is 0.02, "0.5%" 0.005; "0" (or
// "0%") is 0. At most 100%; digits past the sixth after the point are dropped.
double parse_share(std::string_view text);
std::string format_size(std::uint64_t bytes);  // "1.5 GiB"
std::string format_duration(Duration d);       // "1h 30min", "250ms"
std::string format_share(double share);        // "2%", "0.5%", "12.5%"

}  // namespace trimd
