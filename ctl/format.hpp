// How trimctl writes times and progress for people: timestamps as
// systemctl shows them ("Tue 2026-12-01 09:00 UTC; 2h left"), durations,
// percentages and progress bars. Sizes are trimd's own units, read and
// written as trimd.toml has them (trimd::parse_size, trimd::format_size).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "terminal.hpp"

namespace trimctl {

// Microseconds since the Unix epoch (CLOCK_REALTIME), as on the bus.
uint64_t realtime_now_usec();

// "Tue 2026-12-01 09:00 UTC" in the local time zone.
std::string format_timestamp(uint64_t usec);

// "2h left", "3 days ago", "now": the coarse span systemctl prints.
// `one_unit`: "2h left" for 1h 57min, where room is short.
std::string format_relative(uint64_t usec, uint64_t now_usec, bool one_unit = false);

// "Tue 2026-12-01 09:00 UTC; 2h left", or `none` for 0 (never / not set).
std::string format_timestamp_and_relative(uint64_t usec, uint64_t now_usec, std::string_view none);

// "2026-12-01 09:00:00.123" local time, for event logs.
std::string format_log_time(uint64_t usec);

// A pass's wall time: "420ms", "12.3s", "4min 12s", "2h 3min".
std::string format_duration(uint64_t usec);

// "42%": rounded down, so only a finished pass shows 100%.
std::string format_percent(double fraction);

// "[=========>          ]" of exactly `width` characters (at least 3).
std::string progress_bar(double fraction, std::size_t width);

// A pass result as the bus says it (LastResult, GetHistory, TrimFinished),
// read with trimd::PassOutcome: green for success, red for a failure,
// yellow for the rest, none for "" (never trimmed).
bool is_success(std::string_view result);
Color result_color(std::string_view result);

}  // namespace trimctl
