// Reading the kernel's text tables (/proc/self/mountinfo, /proc/diskstats,
// fstab): fields between runs of blanks, and numbers that are whole tokens.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <vector>

namespace trimd {

// Fields separated by runs of `blanks`; leading and trailing blanks ignored.
std::vector<std::string_view> split_fields(std::string_view line, std::string_view blanks = " \t");

// Only plain decimal digits: from_chars alone would accept a partial token.
template <typename Number>
std::optional<Number> parse_whole_number(std::string_view text) {
  Number value{};
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(text.data(), last, value);
  if (error != std::errc{} || end != last) return std::nullopt;
  return value;
}

}  // namespace trimd
