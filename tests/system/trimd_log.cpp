#include "trimd_log.hpp"

#include <nlohmann/json.hpp>

#include <sstream>
#include <stdexcept>

namespace trimd::test {

namespace {

// A field's value: a string, or the array of bytes journalctl (and trimd)
// give for one that is not UTF-8.
std::optional<std::string> field_value(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) return std::nullopt;
  std::string bytes;
  for (const auto& byte : value) {
    if (!byte.is_number_unsigned() || byte.get<unsigned>() > 0xff) return std::nullopt;
    bytes += static_cast<char>(byte.get<unsigned>());
  }
  return bytes;
}

}  // namespace

std::optional<LogEntry> parse_log_line(std::string_view line) {
  const auto object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return std::nullopt;  // also what did not parse
  LogEntry entry;
  for (const auto& [name, value] : object.items()) {
    auto text = field_value(value);
    if (!text) return std::nullopt;
    entry[name] = std::move(*text);
  }
  return entry;
}

std::vector<LogEntry> entries_of(std::string_view text, EventId id,
                                 const std::string& mount_point) {
  const std::string wanted(message_id(id));
  std::vector<LogEntry> out;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    auto entry = parse_log_line(line);
    if (!entry || (*entry)["MESSAGE_ID"] != wanted) continue;
    if (!mount_point.empty() && (*entry)["MOUNT_POINT"] != mount_point) continue;
    out.push_back(std::move(*entry));
  }
  return out;
}

std::uint64_t field_u64(const LogEntry& entry, const std::string& name) {
  const auto it = entry.find(name);
  if (it == entry.end()) throw std::runtime_error("log entry without " + name);
  std::size_t used = 0;
  const std::uint64_t value = std::stoull(it->second, &used);
  if (used != it->second.size())
    throw std::runtime_error(name + "=" + it->second + " is no number");
  return value;
}

std::string readable_log(std::string_view text) {
  std::ostringstream out;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (auto entry = parse_log_line(line))
      out << "<" << (*entry)["PRIORITY"] << "> " << (*entry)["MESSAGE"] << '\n';
    else
      out << line << '\n';
  }
  return out.str();
}

}  // namespace trimd::test
