// Parsers for proc(5) mountinfo and fstab(5).
#include "mountinfo.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

#include "text_fields.hpp"

namespace trimd {

namespace {

constexpr std::string_view kBlanks = " \t";

bool is_octal_digit(char c) { return c >= '0' && c <= '7'; }

// "\040" and friends; a lone backslash is kept as it is.
bool is_octal_escape_at(std::string_view text, std::size_t i) {
  return text[i] == '\\' && i + 3 < text.size() && is_octal_digit(text[i + 1]) &&
         is_octal_digit(text[i + 2]) && is_octal_digit(text[i + 3]);
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// "rw,noatime" -> {"rw", "noatime"}; each option unescaped on its own.
std::vector<std::string> split_options(std::string_view text) {
  std::vector<std::string> options;
  while (!text.empty()) {
    const std::size_t end = text.find(',');
    const std::string_view option = text.substr(0, end);
    if (!option.empty()) options.push_back(unescape_octal(option));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return options;
}

// "254:0" -> {254, 0}
bool parse_device_number(std::string_view text, unsigned& major, unsigned& minor) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  const auto maj = parse_whole_number<unsigned>(text.substr(0, colon));
  const auto min = parse_whole_number<unsigned>(text.substr(colon + 1));
  if (!maj || !min) return false;
  major = *maj;
  minor = *min;
  return true;
}

bool option_matches(const std::string& option, std::string_view name) {
  return option == name ||
         (option.size() > name.size() && option.starts_with(name) && option[name.size()] == '=');
}

bool contains_option(const std::vector<std::string>& options, std::string_view name) {
  return std::any_of(options.begin(), options.end(),
                     [name](const std::string& option) { return option_matches(option, name); });
}

// Fields, per proc(5):
//   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//   (1)(2)(3)   (4)   (5)      (6)      (7...)  (.)  (8)    (9)         (10)
// The optional fields (7) run up to the lone "-".
std::optional<MountEntry> parse_mountinfo_line(std::string_view line) {
  const auto fields = split_fields(line);
  constexpr std::size_t kFirstOptional = 6;
  const auto separator = std::find(fields.begin() + std::min(kFirstOptional, fields.size()),
                                   fields.end(), std::string_view{"-"});
  if (separator == fields.end() || fields.end() - separator != 4) return std::nullopt;

  MountEntry entry;
  const auto mount_id = parse_whole_number<int>(fields[0]);
  const auto parent_id = parse_whole_number<int>(fields[1]);
  if (!mount_id || !parent_id || !parse_device_number(fields[2], entry.major, entry.minor))
    return std::nullopt;
  entry.mount_id = *mount_id;
  entry.parent_id = *parent_id;
  entry.root = unescape_octal(fields[3]);
  entry.mount_point = unescape_octal(fields[4]);
  entry.mount_options = split_options(fields[5]);
  for (auto field = fields.begin() + kFirstOptional; field != separator; ++field)
    entry.optional_fields.emplace_back(*field);
  entry.fs_type = unescape_octal(separator[1]);
  entry.source = unescape_octal(separator[2]);
  entry.super_options = split_options(separator[3]);
  return entry;
}

// fs_spec fs_file [fs_vfstype [fs_mntops [fs_freq [fs_passno]]]]; the
// missing trailing fields take mount(8)'s defaults.
std::optional<FstabEntry> parse_fstab_line(std::string_view line) {
  const auto fields = split_fields(line);
  if (fields.size() < 2 || fields.size() > 6) return std::nullopt;
  for (std::size_t i = 4; i < fields.size(); ++i)
    if (!parse_whole_number<int>(fields[i])) return std::nullopt;  // fs_freq, fs_passno

  FstabEntry entry;
  entry.source = unescape_octal(fields[0]);
  entry.mount_point = unescape_octal(fields[1]);
  entry.fs_type = fields.size() > 2 ? unescape_octal(fields[2]) : "auto";
  entry.options =
      fields.size() > 3 ? split_options(fields[3]) : std::vector<std::string>{"defaults"};
  return entry;
}

bool is_fstab_comment_or_blank(std::string_view line) {
  const std::size_t first = line.find_first_not_of(kBlanks);
  return first == std::string_view::npos || line[first] == '#';
}

}  // namespace

bool MountEntry::has_option(std::string_view name) const {
  return contains_option(mount_options, name) || contains_option(super_options, name);
}

bool MountEntry::read_only() const { return contains_option(super_options, "ro"); }

std::string unescape_octal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_octal_escape_at(text, i)) {
      out.push_back(text[i]);
      continue;
    }
    const int value = (text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0');
    out.push_back(static_cast<char>(value));
    i += 3;
  }
  return out;
}

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  std::vector<MountEntry> entries;
  for (const auto line : split_lines(text))
    if (auto entry = parse_mountinfo_line(line)) entries.push_back(std::move(*entry));
  return entries;
}

std::vector<FstabEntry> parse_fstab(std::string_view text) {
  std::vector<FstabEntry> entries;
  for (const auto line : split_lines(text)) {
    if (is_fstab_comment_or_blank(line)) continue;
    if (auto entry = parse_fstab_line(line)) entries.push_back(std::move(*entry));
  }
  return entries;
}

}  // namespace trimd
