// Reading trimd.toml's values, for the files that read its sections
// (config.cpp, fleet_config.cpp): typed values whose errors name the file,
// line and column. Internal to the policy layer.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "config.hpp"
#include "fleet_config.hpp"

namespace trimd::config_detail {

inline std::string_view describe_type(toml::node_type type) {
  switch (type) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number with a fraction";
    case toml::node_type::boolean: return "true or false";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: return "a date or time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// The range a duration key accepts, each end with the words that name it in
// an error. Upper ends keep every sum of a time and a duration far inside
// TimePoint's range; lower ends keep trimd from spinning.
struct DurationRange {
  Duration min;
  Duration max;
  std::string_view min_text;
  std::string_view max_text;
};

using namespace std::chrono_literals;
constexpr DurationRange kPolicyRange{0s, kMaxPolicyDuration, "0", "10 years"};
constexpr DurationRange kIntervalRange{1min, kMaxPolicyDuration, "1min", "10 years"};
constexpr DurationRange kSampleRange{100ms, 1h, "100ms", "1h"};
constexpr DurationRange kIdleWindowRange{0s, 24h, "0", "1d"};
constexpr DurationRange kPreemptRange{0s, 1s, "0", "1s"};
// The foreground latency that preempts a chunk on a disk that queues discards.
constexpr DurationRange kPreemptLatencyRange{0s, 1s, "0", "1s"};
// Between and within chunks: a pass must not stall for days.
constexpr DurationRange kChunkRange{0s, 1h, "0", "1h"};
// Shorter than a day would forget a filesystem unmounted over a weekend.
constexpr DurationRange kForgetRange{24h, kMaxPolicyDuration, "1d", "10 years"};

// Reads typed values out of one parsed document. `name` is the dotted key
// ("trim.chunk_size") that messages start with.
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const toml::source_region& where, const std::string& message) const {
    throw ConfigError(file_, static_cast<int>(where.begin.line),
                      static_cast<int>(where.begin.column), message);
  }
  [[noreturn]] void fail_type(const std::string& name, const toml::node& value,
                              std::string_view expected) const {
    fail(value.source(),
         fmt::format("{}: expected {}, got {}", name, expected, describe_type(value.type())));
  }

  bool boolean(const std::string& name, const toml::node& value) const {
    if (const auto* b = value.as_boolean()) return b->get();
    fail_type(name, value, "true or false");
  }

  std::string string(const std::string& name, const toml::node& value) const {
    if (const auto* s = value.as_string()) return s->get();
    fail_type(name, value, "a string");
  }

  double number(const std::string& name, const toml::node& value) const {
    double result = 0;
    if (const auto* i = value.as_integer())
      result = static_cast<double>(i->get());
    else if (const auto* f = value.as_floating_point())
      result = f->get();
    else
      fail_type(name, value, "a number");
    if (!(result >= 0)) fail(value.source(), fmt::format("{}: must not be negative", name));
    return result;
  }

  std::uint64_t size(const std::string& name, const toml::node& value) const {
    if (const auto* s = value.as_string()) return parsed(name, value, parse_size, s->get());
    return non_negative_integer(name, value, "a size such as \"256MiB\" or a number of bytes");
  }

  // Strings in systemd's notation; a plain integer is seconds.
  Duration duration(const std::string& name, const toml::node& value) const {
    if (const auto* s = value.as_string()) return parsed(name, value, parse_duration, s->get());
    const auto seconds =
        non_negative_integer(name, value, "a duration such as \"30s\" or \"1h30min\"");
    if (seconds > std::numeric_limits<std::int64_t>::max() / 1'000'000)
      fail(value.source(), fmt::format("{}: {} seconds is too long", name, seconds));
    return std::chrono::seconds{seconds};
  }

  // "" is "any time of day".
  std::optional<TimeWindow> window(const std::string& name, const toml::node& value) const {
    const auto text = string(name, value);
    if (text.empty()) return std::nullopt;
    return parsed(name, value, parse_time_window, text);
  }

  InlineDiscardPolicy inline_discard(const std::string& name, const toml::node& value) const {
    const auto text = string(name, value);
    for (const auto policy :
         {InlineDiscardPolicy::Warn, InlineDiscardPolicy::Takeover, InlineDiscardPolicy::Ignore})
      if (text == to_string(policy)) return policy;
    fail(value.source(),
         fmt::format("{}: \"{}\" is not a choice (use warn, takeover or ignore)", name, text));
  }

  std::uint64_t positive_size(const std::string& name, const toml::node& value) const {
    const auto bytes = size(name, value);
    if (bytes == 0) fail(value.source(), fmt::format("{}: must be greater than 0", name));
    return bytes;
  }

  Duration duration(const std::string& name, const toml::node& value,
                    const DurationRange& range) const {
    const auto d = duration(name, value);
    if (d < range.min)
      fail(value.source(), fmt::format("{}: {} is less than {}, the shortest accepted", name,
                                       format_duration(d), range.min_text));
    if (d > range.max)
      fail(value.source(), fmt::format("{}: {} is more than {}, the longest accepted", name,
                                       format_duration(d), range.max_text));
    return d;
  }

 private:
  template <typename Parse>
  auto parsed(const std::string& name, const toml::node& value, Parse parse,
              std::string_view text) const -> decltype(parse(text)) {
    try {
      return parse(text);
    } catch (const std::invalid_argument& e) {
      fail(value.source(), fmt::format("{}: {}", name, e.what()));
    }
  }

  std::uint64_t non_negative_integer(const std::string& name, const toml::node& value,
                                     std::string_view expected) const {
    const auto* i = value.as_integer();
    if (!i) fail_type(name, value, expected);
    if (i->get() < 0) fail(value.source(), fmt::format("{}: {} is negative", name, i->get()));
    return static_cast<std::uint64_t>(i->get());
  }

  const std::string& file_;
};

inline std::string dotted(std::string_view section, const toml::key& key) {
  return fmt::format("{}.{}", section, key.str());
}

[[noreturn]] inline void fail_unknown_key(const Reader& r, const std::string& name,
                                          const toml::key& key) {
  r.fail(key.source(), fmt::format("{}: unknown key", name));
}

inline const toml::table& section(const Reader& r, const toml::key& key, const toml::node& value) {
  const auto* table = value.as_table();
  if (!table)
    r.fail(value.source(), fmt::format("{}: expected a table ([{}])", key.str(), key.str()));
  return *table;
}

// [fleet] (fleet_config.cpp).
FleetConfig read_fleet(const Reader& r, const toml::table& table);
// A [[filesystem]]'s `backend`.
std::string read_backend(const Reader& r, const std::string& name, const toml::node& value);

}  // namespace trimd::config_detail
