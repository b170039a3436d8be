// libFuzzer: trimd.toml. A ConfigError is the expected answer to bad input;
// anything else escaping, a crash or a sanitizer report is a bug. A config
// that parses must give every filesystem a policy without overflow.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config.hpp"
#include "schedule.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const trimd::Config config = trimd::parse_config(text, "fuzz.toml");
    const auto policy = config.policy_for("/srv/data", "0b6b1b4e", "ext4");
    const trimd::TimePoint now = trimd::Clock::from_time_t(1'800'000'000);
    const auto due = trimd::next_due(policy.schedule, now, now, 0.5);
    (void)trimd::is_overdue(policy.schedule, due, now);
    (void)trimd::format_duration(policy.schedule.interval);
  } catch (const trimd::ConfigError&) {
  }
  return 0;
}
