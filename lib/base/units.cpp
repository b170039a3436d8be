// Human units: sizes, durations and daily windows as admins write them in
// trimd.toml, and sizes and durations as trimd prints them in its logs.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "units.hpp"

namespace trimd {
namespace {

constexpr std::int64_t usec_per_sec = 1'000'000;

std::string_view strip_spaces(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char to_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  return true;
}

// A non-negative decimal as written: "12", "1.5", ".25". Digits past the
// sixth after the point are dropped: nobody means a millionth of a byte, and
// six digits keep fraction * multiplier inside 64 bits for every unit we know.
struct Decimal {
  std::uint64_t whole = 0;
  std::uint64_t fraction = 0;        // the kept digits after the point
  std::uint64_t fraction_scale = 1;  // 10 ^ number of kept digits
  bool too_large = false;            // the whole part does not fit 64 bits
};

constexpr int max_fraction_digits = 6;

// Takes the decimal at the front of `s` off it; nothing when there is none.
std::optional<Decimal> take_decimal(std::string_view& s) {
  std::size_t end = 0;
  while (end < s.size() && is_digit(s[end])) ++end;
  Decimal number;
  if (end > 0) {
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + end, number.whole);
    number.too_large = ec == std::errc::result_out_of_range;
  }
  bool has_digits = end > 0;
  if (end < s.size() && s[end] == '.') {
    ++end;
    for (int kept = 0; end < s.size() && is_digit(s[end]); ++end, has_digits = true) {
      if (kept++ >= max_fraction_digits) continue;
      number.fraction = number.fraction * 10 + static_cast<std::uint64_t>(s[end] - '0');
      number.fraction_scale *= 10;
    }
  }
  if (!has_digits) return std::nullopt;
  s.remove_prefix(end);
  return number;
}

std::string_view take_letters(std::string_view& s) {
  std::size_t end = 0;
  while (end < s.size() && is_letter(s[end])) ++end;
  const auto letters = s.substr(0, end);
  s.remove_prefix(end);
  return letters;
}

// number * multiplier, the fraction of the result truncated; nothing on overflow.
std::optional<std::uint64_t> scale(const Decimal& number, std::uint64_t multiplier) {
  std::uint64_t whole = 0;
  std::uint64_t total = 0;
  if (number.too_large || __builtin_mul_overflow(number.whole, multiplier, &whole))
    return std::nullopt;
  // fraction < fraction_scale: split the multiplier so that 0.5 EiB
  // (2^60 times six digits) does not overflow on the way.
  const std::uint64_t per_scale = multiplier / number.fraction_scale;
  const std::uint64_t rest = multiplier % number.fraction_scale;
  const std::uint64_t part =
      number.fraction * per_scale + number.fraction * rest / number.fraction_scale;
  if (__builtin_add_overflow(whole, part, &total)) return std::nullopt;
  return total;
}

// "", "B": bytes. K/KiB, M/MiB, ... up to E/EiB are powers of 1024; KB,
// MB, ... EB powers of 1000 (as util-linux and the SI say). Case does not
// matter. EiB = 2^60 and EB = 10^18 still fit 64 bits.
std::optional<std::uint64_t> size_multiplier(std::string_view suffix) {
  if (suffix.empty() || equals_ignoring_case(suffix, "B")) return 1;
  constexpr std::string_view prefixes = "kmgtpe";
  const auto power = prefixes.find(to_lower(suffix.front()));
  if (power == std::string_view::npos) return std::nullopt;
  const auto rest = suffix.substr(1);
  std::uint64_t base = 0;
  if (rest.empty() || equals_ignoring_case(rest, "iB"))
    base = 1024;
  else if (equals_ignoring_case(rest, "B"))
    base = 1000;
  else
    return std::nullopt;
  std::uint64_t multiplier = base;
  for (std::size_t i = 0; i < power; ++i) multiplier *= base;
  return multiplier;
}

struct DurationUnit {
  std::string_view name;
  std::int64_t usec;
};

constexpr std::int64_t usec_per_min = 60 * usec_per_sec;
constexpr std::int64_t usec_per_hour = 60 * usec_per_min;
constexpr std::int64_t usec_per_day = 24 * usec_per_hour;
constexpr std::int64_t usec_per_week = 7 * usec_per_day;

// What parse_duration accepts: systemd's spellings (case matters: "m" is minutes).
constexpr std::array<DurationUnit, 22> duration_spellings{{
    {"us", 1},
    {"usec", 1},
    {"ms", 1000},
    {"msec", 1000},
    {"s", usec_per_sec},
    {"sec", usec_per_sec},
    {"second", usec_per_sec},
    {"seconds", usec_per_sec},
    {"min", usec_per_min},
    {"m", usec_per_min},
    {"minute", usec_per_min},
    {"minutes", usec_per_min},
    {"h", usec_per_hour},
    {"hr", usec_per_hour},
    {"hour", usec_per_hour},
    {"hours", usec_per_hour},
    {"d", usec_per_day},
    {"day", usec_per_day},
    {"days", usec_per_day},
    {"w", usec_per_week},
    {"week", usec_per_week},
    {"weeks", usec_per_week},
}};

// What format_duration prints, largest first.
constexpr std::array<DurationUnit, 7> duration_units{{
    {"w", usec_per_week},
    {"d", usec_per_day},
    {"h", usec_per_hour},
    {"min", usec_per_min},
    {"s", usec_per_sec},
    {"ms", 1000},
    {"us", 1},
}};

std::optional<std::int64_t> duration_multiplier(std::string_view name) {
  for (const auto& unit : duration_spellings)
    if (unit.name == name) return unit.usec;
  return std::nullopt;
}

std::invalid_argument not_a_duration(std::string_view text) {
  return std::invalid_argument(fmt::format(
      "\"{}\" is not a duration (use e.g. \"30s\", \"100ms\", \"1h30min\", \"1w\", or a number of "
      "seconds)",
      text));
}

std::invalid_argument not_a_window(std::string_view text) {
  return std::invalid_argument(fmt::format(
      "\"{}\" is not a time window (use \"HH:MM-HH:MM\" in local time, e.g. \"01:00-06:00\")",
      text));
}

// "H:MM" or "HH:MM" -> minutes after midnight; "24:00" is midnight too, so
// that "22:00-24:00" reads as it is meant.
std::optional<int> parse_clock_time(std::string_view s) {
  const auto colon = s.find(':');
  if (colon == std::string_view::npos || colon < 1 || colon > 2 || s.size() != colon + 3)
    return std::nullopt;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (i != colon && !is_digit(s[i])) return std::nullopt;
  int hour = 0;
  int minute = 0;
  std::from_chars(s.data(), s.data() + colon, hour);
  std::from_chars(s.data() + colon + 1, s.data() + s.size(), minute);
  if (hour == 24 && minute == 0) return 0;
  if (hour > 23 || minute > 59) return std::nullopt;
  return hour * 60 + minute;
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  std::string_view rest = strip_spaces(text);
  const auto number = take_decimal(rest);
  const auto multiplier = size_multiplier(strip_spaces(rest));
  if (!number || !multiplier)
    throw std::invalid_argument(fmt::format(
        "\"{}\" is not a size (use e.g. \"256MiB\", \"1GiB\", or a number of bytes)", text));
  if (*multiplier == 1 && number->fraction != 0)
    throw std::invalid_argument(fmt::format("\"{}\" is not a whole number of bytes", text));
  const auto bytes = scale(*number, *multiplier);
  if (!bytes)
    throw std::invalid_argument(fmt::format("\"{}\" is too large (at most {} bytes)", text,
                                            std::numeric_limits<std::uint64_t>::max()));
  return *bytes;
}

Duration parse_duration(std::string_view text) {
  std::string_view rest = strip_spaces(text);
  const auto too_long = [&] {
    return std::invalid_argument(
        fmt::format("\"{}\" is too long (at most about 292000 years)", text));
  };
  std::uint64_t total = 0;
  bool first = true;
  do {
    const auto number = take_decimal(rest);
    if (!number) throw not_a_duration(text);
    rest = strip_spaces(rest);
    const auto unit = take_letters(rest);
    // A bare number is seconds, as in systemd, but only standing alone.
    if (unit.empty() && !(first && rest.empty())) throw not_a_duration(text);
    const auto multiplier = unit.empty() ? usec_per_sec : duration_multiplier(unit);
    if (!multiplier) throw not_a_duration(text);
    const auto usec = scale(*number, static_cast<std::uint64_t>(*multiplier));
    if (!usec || __builtin_add_overflow(total, *usec, &total)) throw too_long();
    rest = strip_spaces(rest);
    first = false;
  } while (!rest.empty());
  if (total > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw too_long();
  return Duration{static_cast<std::int64_t>(total)};
}

TimeWindow parse_time_window(std::string_view text) {
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) throw not_a_window(text);
  const auto start = parse_clock_time(strip_spaces(text.substr(0, dash)));
  const auto end = parse_clock_time(strip_spaces(text.substr(dash + 1)));
  if (!start || !end) throw not_a_window(text);
  return TimeWindow{*start, *end};
}

std::string format_size(std::uint64_t bytes) {
  constexpr std::array<std::string_view, 7> units{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  std::size_t unit = 0;
  auto value = static_cast<double>(bytes);
  while (value >= 1024 && unit + 1 < units.size()) {
    value /= 1024;
    ++unit;
  }
  // One decimal is enough for a log line; 1023.97 MiB rounds up to "1 GiB".
  double rounded = std::round(value * 10) / 10;
  if (rounded >= 1024 && unit + 1 < units.size()) {
    rounded = std::round(value / 1024 * 10) / 10;
    ++unit;
  }
  if (rounded == std::floor(rounded)) return fmt::format("{:.0f} {}", rounded, units[unit]);
  return fmt::format("{:.1f} {}", rounded, units[unit]);
}

double parse_share(std::string_view text) {
  std::string_view rest = strip_spaces(text);
  const auto number = take_decimal(rest);
  const bool zero = number && number->whole == 0 && number->fraction == 0;
  if (!number || number->too_large || !(rest == "%" || (rest.empty() && zero)))
    throw std::invalid_argument(
        fmt::format("\"{}\" is not a share of time (use a percentage such as \"2%\" or "
                    "\"0.5%\", or \"0\")",
                    text));
  const double percent =
      static_cast<double>(number->whole) +
      static_cast<double>(number->fraction) / static_cast<double>(number->fraction_scale);
  if (percent > 100) throw std::invalid_argument(fmt::format("\"{}\" is more than 100%", text));
  return percent / 100;
}

std::string format_share(double share) { return fmt::format("{:.4g}%", share * 100); }

std::string format_duration(Duration d) {
  std::int64_t usec = d.count();
  if (usec == 0) return "0s";
  if (usec == std::numeric_limits<std::int64_t>::min()) ++usec;  // so that it can be negated
  const std::string sign = usec < 0 ? "-" : "";
  usec = usec < 0 ? -usec : usec;
  const auto leading = [&] {
    std::size_t i = 0;
    while (usec < duration_units[i].usec) ++i;
    return i;
  };
  // Two units are enough for a log line ("1h 30min"): round to the second one.
  if (const auto i = leading(); i + 1 < duration_units.size()) {
    const auto step = duration_units[i + 1].usec;
    if (usec <= std::numeric_limits<std::int64_t>::max() - step / 2)
      usec = (usec + step / 2) / step * step;
  }
  const auto i = leading();
  std::string out =
      sign + fmt::format("{}{}", usec / duration_units[i].usec, duration_units[i].name);
  if (i + 1 < duration_units.size()) {
    const auto& next = duration_units[i + 1];
    if (const auto rest = usec % duration_units[i].usec / next.usec; rest != 0)
      out += fmt::format(" {}{}", rest, next.name);
  }
  return out;
}

}  // namespace trimd
