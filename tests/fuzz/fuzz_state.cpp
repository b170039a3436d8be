// libFuzzer: state.toml. std::runtime_error is how the store calls a file
// corrupt (it is then moved aside); a crash or a sanitizer report is a bug.
// Whatever parses must survive the arithmetic the manager does with it.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "schedule.hpp"
#include "state_store.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const trimd::StateMap state = trimd::parse_state(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-state.toml");
    const trimd::SchedulePolicy policy;
    const trimd::TimePoint now = trimd::Clock::from_time_t(1'800'000'000);
    for (const auto& [id, record] : state) {
      const auto due = trimd::next_due(policy, record.last_end, now, 0.5);
      (void)trimd::is_overdue(policy, due, now);
      if (record.pass_start) (void)(now - *record.pass_start);
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
