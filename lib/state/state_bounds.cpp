#include "state_bounds.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace trimd {

std::vector<bool> records_that_fit(const std::vector<FormattedRecord>& records, std::size_t budget,
                                   std::size_t max_records) {
  std::vector<std::size_t> newest_first(records.size());
  std::iota(newest_first.begin(), newest_first.end(), std::size_t{0});
  // The id breaks ties so that the same state always keeps the same records.
  std::sort(newest_first.begin(), newest_first.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(records[a].seen, records[a].id) > std::tie(records[b].seen, records[b].id);
  });
  std::vector<bool> keep(records.size(), false);
  std::size_t used = 0;
  std::size_t kept = 0;
  for (const std::size_t i : newest_first) {
    const std::size_t size = records[i].text.size();
    if (kept == max_records || size > budget - used) break;
    keep[i] = true;
    used += size;
    ++kept;
  }
  return keep;
}

}  // namespace trimd
