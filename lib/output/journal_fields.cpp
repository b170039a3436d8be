#include "journal_fields.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>

#include "utf8.hpp"

namespace trimd {

namespace {

constexpr std::size_t kMaxFieldName = 64;

bool reserved_for_the_sink(std::string_view name) {
  return name == "MESSAGE" || name == "PRIORITY" || name == "SYSLOG_IDENTIFIER";
}

template <typename Number>
bool parse_whole(std::string_view text, Number& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc{} && end == text.data() + text.size() && !text.empty();
}

// A value as journalctl -o json gives it: a string, or the array of its
// bytes when it is not valid UTF-8.
nlohmann::ordered_json journal_json_value(std::string_view value) {
  if (is_valid_utf8(value)) return std::string(value);
  auto bytes = nlohmann::ordered_json::array();
  for (const char c : value) bytes.push_back(static_cast<unsigned char>(c));
  return bytes;
}

}  // namespace

int syslog_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical: return 2;
    case spdlog::level::err: return 3;
    case spdlog::level::warn: return 4;
    case spdlog::level::info: return 6;
    default: return 7;  // debug, trace
  }
}

bool valid_journal_field_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxFieldName) return false;
  if (name.front() == '_' || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::vector<std::string> journal_entry(std::string_view message, int priority,
                                       std::string_view identifier, const LogFields& extra) {
  std::vector<std::string> entry;
  entry.push_back("MESSAGE=" + std::string(message));
  entry.push_back("PRIORITY=" + std::to_string(priority));
  entry.push_back("SYSLOG_IDENTIFIER=" + std::string(identifier));
  for (const auto& field : extra)
    if (valid_journal_field_name(field.name) && !reserved_for_the_sink(field.name))
      entry.push_back(field.name + "=" + field.value);
  return entry;
}

std::string json_log_line(std::int64_t realtime_usec, const std::vector<std::string>& entry) {
  nlohmann::ordered_json line{{"__REALTIME_TIMESTAMP", std::to_string(realtime_usec)}};
  for (const auto& field : entry) {
    const auto equals = field.find('=');
    if (equals == std::string::npos) continue;
    line[field.substr(0, equals)] = journal_json_value(std::string_view(field).substr(equals + 1));
  }
  // Strings are valid UTF-8 by now; a log sink must not throw all the same.
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

bool journal_stream_matches(std::string_view journal_stream, dev_t fd_dev, ino_t fd_ino) {
  const auto colon = journal_stream.find(':');
  if (colon == std::string_view::npos) return false;
  unsigned long long dev = 0;
  unsigned long long ino = 0;
  if (!parse_whole(journal_stream.substr(0, colon), dev) ||
      !parse_whole(journal_stream.substr(colon + 1), ino))
    return false;
  return dev == static_cast<unsigned long long>(fd_dev) &&
         ino == static_cast<unsigned long long>(fd_ino);
}

}  // namespace trimd
