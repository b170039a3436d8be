#include "format.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "pass_outcome.hpp"

namespace trimctl {

namespace {

constexpr uint64_t kUsecPerMsec = 1000;
constexpr uint64_t kUsecPerSec = 1000 * kUsecPerMsec;
constexpr uint64_t kUsecPerMin = 60 * kUsecPerSec;
constexpr uint64_t kUsecPerHour = 60 * kUsecPerMin;
constexpr uint64_t kUsecPerDay = 24 * kUsecPerHour;
constexpr uint64_t kUsecPerWeek = 7 * kUsecPerDay;
constexpr uint64_t kUsecPerMonth = 2629800 * kUsecPerSec;  // 30.44 days
constexpr uint64_t kUsecPerYear = 31557600 * kUsecPerSec;  // 365.25 days

struct SpanUnit {
  uint64_t usec;
  const char* name;
  bool spelled_out;  // "3 days" rather than "3h"
};

constexpr SpanUnit kYear{kUsecPerYear, "year", true};
constexpr SpanUnit kMonth{kUsecPerMonth, "month", true};
constexpr SpanUnit kWeek{kUsecPerWeek, "week", true};
constexpr SpanUnit kDay{kUsecPerDay, "day", true};
constexpr SpanUnit kHour{kUsecPerHour, "h", false};
constexpr SpanUnit kMinute{kUsecPerMin, "min", false};
constexpr SpanUnit kSecond{kUsecPerSec, "s", false};

std::string amount(uint64_t n, const SpanUnit& unit) {
  if (!unit.spelled_out) return std::to_string(n) + unit.name;
  return std::to_string(n) + " " + unit.name + (n == 1 ? "" : "s");
}

// The span rounded to what a person needs: two units at most, the second
// only where it still matters (the choice systemctl makes); `one_unit`:
// the first alone, rounded to the nearest.
std::string coarse_span(uint64_t d, bool one_unit) {
  struct Rule {
    uint64_t at_least;
    const SpanUnit* major;
    const SpanUnit* minor;
  };
  static constexpr std::array<Rule, 9> kRules{{
      {kUsecPerYear, &kYear, &kMonth},
      {kUsecPerMonth, &kMonth, &kDay},
      {kUsecPerWeek, &kWeek, &kDay},
      {2 * kUsecPerDay, &kDay, nullptr},
      {kUsecPerDay, &kDay, &kHour},
      {6 * kUsecPerHour, &kHour, nullptr},
      {kUsecPerHour, &kHour, &kMinute},
      {5 * kUsecPerMin, &kMinute, nullptr},
      {kUsecPerMin, &kMinute, &kSecond},
  }};
  for (const auto& rule : kRules) {
    if (d < rule.at_least) continue;
    if (one_unit) return amount((d + rule.major->usec / 2) / rule.major->usec, *rule.major);
    std::string text = amount(d / rule.major->usec, *rule.major);
    if (rule.minor) {
      const uint64_t rest = (d % rule.major->usec) / rule.minor->usec;
      if (rest != 0) text += " " + amount(rest, *rule.minor);
    }
    return text;
  }
  return amount(d / kUsecPerSec, kSecond);
}

bool local_time(uint64_t usec, std::tm& out) {
  const auto seconds = static_cast<std::time_t>(usec / kUsecPerSec);
  return localtime_r(&seconds, &out) != nullptr;
}

}  // namespace

uint64_t realtime_now_usec() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<microseconds>(system_clock::now().time_since_epoch()).count());
}

std::string format_timestamp(uint64_t usec) {
  std::tm tm{};
  if (!local_time(usec, tm)) return std::to_string(usec);
  char buffer[64];
  const std::size_t n = std::strftime(buffer, sizeof buffer, "%a %Y-%m-%d %H:%M %Z", &tm);
  return std::string(buffer, n);
}

std::string format_relative(uint64_t usec, uint64_t now_usec, bool one_unit) {
  const bool future = usec > now_usec;
  const uint64_t span = future ? usec - now_usec : now_usec - usec;
  if (span < kUsecPerSec) return "now";
  return coarse_span(span, one_unit) + (future ? " left" : " ago");
}

std::string format_timestamp_and_relative(uint64_t usec, uint64_t now_usec, std::string_view none) {
  if (usec == 0) return std::string(none);
  return format_timestamp(usec) + "; " + format_relative(usec, now_usec);
}

std::string format_log_time(uint64_t usec) {
  std::tm tm{};
  if (!local_time(usec, tm)) return std::to_string(usec);
  char buffer[64];
  const std::size_t n = std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S", &tm);
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03u",
                static_cast<unsigned>((usec % kUsecPerSec) / kUsecPerMsec));
  return std::string(buffer, n) + millis;
}

std::string format_duration(uint64_t usec) {
  if (usec < kUsecPerSec) return std::to_string(usec / kUsecPerMsec) + "ms";
  if (usec < kUsecPerMin) {
    const uint64_t tenths = usec / (kUsecPerSec / 10);
    return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "s";
  }
  if (usec < kUsecPerHour)
    return std::to_string(usec / kUsecPerMin) + "min " +
           std::to_string((usec % kUsecPerMin) / kUsecPerSec) + "s";
  return std::to_string(usec / kUsecPerHour) + "h " +
         std::to_string((usec % kUsecPerHour) / kUsecPerMin) + "min";
}

std::string format_percent(double fraction) {
  const double clamped = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0);
  return std::to_string(static_cast<int>(std::floor(clamped * 100.0 + 1e-9))) + "%";
}

std::string progress_bar(double fraction, std::size_t width) {
  const std::size_t inner = std::max<std::size_t>(width, 3) - 2;
  const double clamped = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0);
  const auto filled = static_cast<std::size_t>(std::floor(clamped * static_cast<double>(inner)));
  if (filled >= inner) return "[" + std::string(inner, '=') + "]";
  const std::string head = filled > 0 ? std::string(filled, '=') + ">" : "";
  return "[" + head + std::string(inner - head.size(), ' ') + "]";
}

bool is_success(std::string_view result) {
  const auto outcome = trimd::PassOutcome::parse(result);
  return outcome && outcome->result == trimd::PassResult::Success;
}

Color result_color(std::string_view result) {
  const auto outcome = trimd::PassOutcome::parse(result);
  if (!outcome) return result.empty() ? Color::None : Color::Yellow;
  if (outcome->result == trimd::PassResult::Success) return Color::Green;
  return outcome->result == trimd::PassResult::Failed ? Color::Red : Color::Yellow;
}

}  // namespace trimctl
