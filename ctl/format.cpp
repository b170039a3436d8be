#include "format.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

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

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim_spaces(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::optional<uint64_t> size_multiplier(std::string_view suffix) {
  struct Prefix {
    char letter;
    unsigned power;
  };
  static constexpr std::array<Prefix, 6> kPrefixes{
      {{'k', 1}, {'m', 2}, {'g', 3}, {'t', 4}, {'p', 5}, {'e', 6}}};
  const std::string s = lowercase(suffix);
  if (s.empty() || s == "b") return 1;
  for (const auto& prefix : kPrefixes) {
    if (s[0] != prefix.letter) continue;
    const std::string rest = s.substr(1);
    uint64_t base;
    if (rest.empty() || rest == "ib")
      base = 1024;
    else if (rest == "b")
      base = 1000;
    else
      return std::nullopt;
    uint64_t multiplier = 1;
    for (unsigned i = 0; i < prefix.power; ++i) multiplier *= base;
    return multiplier;
  }
  return std::nullopt;
}

// Reads "123" or "1.25" from the front of `text` as whole part, fraction
// digits and their count; nothing when there is no digit.
struct Decimal {
  uint64_t whole = 0;
  uint64_t fraction = 0;
  uint64_t fraction_scale = 1;
};

std::optional<Decimal> take_decimal(std::string_view& text) {
  Decimal number;
  std::size_t digits = 0;
  while (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front()))) {
    const auto digit = static_cast<uint64_t>(text.front() - '0');
    if (__builtin_mul_overflow(number.whole, 10u, &number.whole) ||
        __builtin_add_overflow(number.whole, digit, &number.whole))
      return std::nullopt;
    text.remove_prefix(1);
    ++digits;
  }
  if (!text.empty() && text.front() == '.') {
    text.remove_prefix(1);
    // More than 18 fraction digits say nothing a uint64_t could hold.
    while (!text.empty() && std::isdigit(static_cast<unsigned char>(text.front()))) {
      if (number.fraction_scale < 1000000000000000000ull) {
        number.fraction = number.fraction * 10 + static_cast<uint64_t>(text.front() - '0');
        number.fraction_scale *= 10;
      }
      text.remove_prefix(1);
      ++digits;
    }
  }
  if (digits == 0) return std::nullopt;
  return number;
}

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
// only where it still matters (the choice systemctl makes).
std::string coarse_span(uint64_t d) {
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

std::string format_bytes(uint64_t bytes) {
  static constexpr std::array<const char*, 7> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  std::size_t unit = 0;
  double value = static_cast<double>(bytes);
  // Round to tenths first, so 1023.96 KiB becomes "1 MiB", not "1024 KiB".
  while (unit + 1 < kUnits.size() && std::round(value * 10.0) / 10.0 >= 1024.0) {
    value /= 1024.0;
    ++unit;
  }
  const auto tenths = static_cast<uint64_t>(std::llround(value * 10.0));
  std::string number = std::to_string(tenths / 10);
  if (tenths % 10 != 0) number += "." + std::to_string(tenths % 10);
  return number + " " + kUnits[unit];
}

std::optional<uint64_t> parse_bytes(std::string_view text) {
  text = trim_spaces(text);
  const auto number = take_decimal(text);
  if (!number) return std::nullopt;
  const auto multiplier = size_multiplier(trim_spaces(text));
  if (!multiplier) return std::nullopt;
  if (number->fraction != 0 && *multiplier == 1) return std::nullopt;  // no half bytes
  uint64_t total;
  if (__builtin_mul_overflow(number->whole, *multiplier, &total)) return std::nullopt;
  // fraction < scale <= 10^18 and multiplier <= 2^60: split to stay in range.
  const uint64_t per_step = *multiplier / number->fraction_scale;
  const uint64_t rest = *multiplier % number->fraction_scale;
  const auto fractional = static_cast<uint64_t>(
      number->fraction * per_step +
      static_cast<uint64_t>(static_cast<long double>(number->fraction) * rest /
                            static_cast<long double>(number->fraction_scale)));
  if (__builtin_add_overflow(total, fractional, &total)) return std::nullopt;
  return total;
}

std::string format_timestamp(uint64_t usec) {
  std::tm tm{};
  if (!local_time(usec, tm)) return std::to_string(usec);
  char buffer[64];
  const std::size_t n = std::strftime(buffer, sizeof buffer, "%a %Y-%m-%d %H:%M %Z", &tm);
  return std::string(buffer, n);
}

std::string format_relative(uint64_t usec, uint64_t now_usec) {
  const bool future = usec > now_usec;
  const uint64_t span = future ? usec - now_usec : now_usec - usec;
  if (span < kUsecPerSec) return "now";
  return coarse_span(span) + (future ? " left" : " ago");
}

std::string format_timestamp_and_relative(uint64_t usec, uint64_t now_usec,
                                          std::string_view none) {
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

}  // namespace trimctl
