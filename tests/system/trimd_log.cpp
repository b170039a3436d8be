#include "trimd_log.hpp"

#include <sstream>
#include <stdexcept>

namespace trimd::test {

namespace {

// A cursor over one line of JSON, for the flat objects trimd writes.
class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : text_(text) {}

  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }

  std::optional<std::string> string() {
    if (!eat('"')) return std::nullopt;
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) return std::nullopt;
      const char escaped = text_[pos_++];
      switch (escaped) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'u': {
          // trimd escapes only control characters this way: one byte.
          if (pos_ + 4 > text_.size()) return std::nullopt;
          out += static_cast<char>(std::stoi(std::string(text_.substr(pos_, 4)), nullptr, 16));
          pos_ += 4;
          break;
        }
        default: out += escaped;  // \" \\ \/
      }
    }
    return std::nullopt;
  }

  // [1,2,3]: the bytes of a value that is not valid UTF-8.
  std::optional<std::string> byte_array() {
    if (!eat('[')) return std::nullopt;
    std::string out;
    if (eat(']')) return out;
    do {
      skip_space();
      std::size_t used = 0;
      const int byte = std::stoi(std::string(text_.substr(pos_, 3)), &used);
      pos_ += used;
      out += static_cast<char>(byte);
    } while (eat(','));
    return eat(']') ? std::optional(out) : std::nullopt;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::optional<LogEntry> parse_log_line(std::string_view line) {
  try {
    JsonReader in(line);
    if (!in.eat('{')) return std::nullopt;
    LogEntry entry;
    if (in.eat('}')) return in.at_end() ? std::optional(entry) : std::nullopt;
    do {
      const auto name = in.string();
      if (!name || !in.eat(':')) return std::nullopt;
      auto value = in.string();
      if (!value) value = in.byte_array();
      if (!value) return std::nullopt;
      entry[*name] = std::move(*value);
    } while (in.eat(','));
    if (!in.eat('}') || !in.at_end()) return std::nullopt;
    return entry;
  } catch (const std::exception&) {  // std::stoi on garbage
    return std::nullopt;
  }
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
  if (used != it->second.size()) throw std::runtime_error(name + "=" + it->second + " is no number");
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
