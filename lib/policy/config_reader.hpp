// Reading trimd.toml's values, for the files that read its keys (config.cpp,
// config_keys.cpp, fleet_config.cpp): typed values whose errors name the file,
// line and column. Internal to the policy layer.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

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
constexpr DurationRange kLeaseRange{kMinLeaseTtl, kMaxLeaseTtl, "5s", "10min"};
constexpr DurationRange kUnreachableRange{0s, 24h, "0", "1d"};

// Where in which file: what an error names.
struct Place {
  std::string file;
  int line = 0;
  int column = 0;
};

inline Place place_of(const std::string& file, const toml::source_region& where) {
  return {file, static_cast<int>(where.begin.line), static_cast<int>(where.begin.column)};
}

[[noreturn]] inline void fail_at(const Place& place, const std::string& message) {
  throw ConfigError(place.file, place.line, place.column, message);
}

// One key's value, read as the key's type. Messages start with the dotted
// key ("trim.chunk_size: ...") and name the value's file, line and column.
class Value {
 public:
  Value(const std::string& file, std::string name, const toml::node& node)
      : file_(file), name_(std::move(name)), node_(node) {}

  const std::string& name() const { return name_; }
  const toml::node& node() const { return node_; }
  // An element of this value's array, read as a value of the same key.
  Value element(const toml::node& node) const { return Value(file_, name_, node); }

  [[noreturn]] void fail(std::string_view message) const {
    fail_at(place_of(file_, node_.source()), fmt::format("{}: {}", name_, message));
  }
  [[noreturn]] void fail_type(std::string_view expected) const {
    fail(fmt::format("expected {}, got {}", expected, describe_type(node_.type())));
  }

  bool boolean() const {
    if (const auto* b = node_.as_boolean()) return b->get();
    fail_type("true or false");
  }

  std::string string() const {
    if (const auto* s = node_.as_string()) return s->get();
    fail_type("a string");
  }

  // Not negative; integer or with a fraction.
  double number() const {
    double result = 0;
    if (const auto* i = node_.as_integer())
      result = static_cast<double>(i->get());
    else if (const auto* f = node_.as_floating_point())
      result = f->get();
    else
      fail_type("a number");
    if (!(result >= 0)) fail("must not be negative");
    return result;
  }

  std::uint64_t size() const {
    if (const auto* s = node_.as_string()) return parsed(parse_size, s->get());
    return non_negative_integer("a size such as \"256MiB\" or a number of bytes");
  }

  std::uint64_t positive_size() const {
    const auto bytes = size();
    if (bytes == 0) fail("must be greater than 0");
    return bytes;
  }

  // Strings in systemd's notation; a plain integer is seconds.
  Duration duration(const DurationRange& range) const {
    const auto d = any_duration();
    if (d < range.min)
      fail(fmt::format("{} is less than {}, the shortest accepted", format_duration(d),
                       range.min_text));
    if (d > range.max)
      fail(fmt::format("{} is more than {}, the longest accepted", format_duration(d),
                       range.max_text));
    return d;
  }

  // "" is "any time of day".
  std::optional<TimeWindow> window() const {
    const auto text = string();
    if (text.empty()) return std::nullopt;
    return parsed(parse_time_window, text);
  }

 private:
  Duration any_duration() const {
    if (const auto* s = node_.as_string()) return parsed(parse_duration, s->get());
    const auto seconds = non_negative_integer("a duration such as \"30s\" or \"1h30min\"");
    if (seconds > std::numeric_limits<std::int64_t>::max() / 1'000'000)
      fail(fmt::format("{} seconds is too long", seconds));
    return std::chrono::seconds{seconds};
  }

  template <typename Parse>
  auto parsed(Parse parse, std::string_view text) const -> decltype(parse(text)) {
    try {
      return parse(text);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
  }

  std::uint64_t non_negative_integer(std::string_view expected) const {
    const auto* i = node_.as_integer();
    if (!i) fail_type(expected);
    if (i->get() < 0) fail(fmt::format("{} is negative", i->get()));
    return static_cast<std::uint64_t>(i->get());
  }

  const std::string& file_;
  std::string name_;
  const toml::node& node_;
};

// What reading one key changes: the Config being built and, in a
// [[filesystem]] table, the rule being read.
struct Target {
  Config& config;
  PolicyOverride* rule = nullptr;

  // A change to the policy of filesystems: in [trim] to every filesystem's,
  // in a rule to the policy of those it matches.
  void policy(PolicyChange change) const {
    if (rule)
      rule->changes.push_back(std::move(change));
    else
      change(config.trim);
  }
  // [fleet] as read so far (a file may change some of its keys only).
  FleetConfig& fleet() const { return config.fleet ? *config.fleet : config.fleet.emplace(); }
};

// The change that sets one field of a filesystem's policy.
template <typename T>
PolicyChange set(T TrimPolicy::*field, std::type_identity_t<T> value) {
  return [field, value = std::move(value)](TrimPolicy& policy) { policy.*field = value; };
}
template <typename T>
PolicyChange set(T SchedulePolicy::*field, std::type_identity_t<T> value) {
  return [field, value = std::move(value)](TrimPolicy& policy) { policy.schedule.*field = value; };
}

// The readers of [fleet]'s values (fleet_config.cpp).
std::vector<std::string> read_endpoints(const Value& value);
std::string read_absolute_file(const Value& value);
unsigned read_max_concurrent(const Value& value);
OnUnreachable read_on_unreachable(const Value& value);
std::string read_backend(const Value& value);
std::string read_host(const Value& value);
// What [fleet] needs whole, once every file is read: errors name `table`.
void check_fleet(const FleetConfig& fleet, const Place& table);

}  // namespace trimd::config_detail
