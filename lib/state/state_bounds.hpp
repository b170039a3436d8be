// Which records go into the state file when not all of them fit: trimd never
// writes a file larger than it reads back (kMaxStateFileBytes), nor more
// records than kMaxStateRecords. The least recently seen go first.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "time.hpp"

namespace trimd {

// One record as it stands in the file.
struct FormattedRecord {
  std::string_view id;
  std::optional<TimePoint> seen;  // none: older than any sighting
  std::string text;
};

// Which of `records` to keep (true) so that their texts add up to at most
// `budget` bytes and there are at most `max_records`: the most recently
// seen first, until the next one does not fit; that one and all seen
// before it are left out.
std::vector<bool> records_that_fit(const std::vector<FormattedRecord>& records, std::size_t budget,
                                   std::size_t max_records);

}  // namespace trimd
