#include "bus_names.hpp"

#include "utf8.hpp"

namespace trimd::bus {

namespace {

constexpr char kHex[] = "0123456789abcdef";

bool is_plain(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // sd_bus_path_decode accepts lower case only, as it writes it
}

}  // namespace

std::string bus_string(std::string_view text) { return escape_bytes(text); }

std::optional<std::string> raw_from_bus_string(std::string_view text) {
  return unescape_bytes(text);
}

std::vector<std::string> bus_strings(const std::vector<std::string>& texts) {
  std::vector<std::string> out;
  out.reserve(texts.size());
  for (const auto& text : texts) out.push_back(bus_string(text));
  return out;
}

std::string escape_path_element(std::string_view text) {
  if (text.empty()) return "_";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_plain(c)) {
      out += ch;
    } else {
      out += '_';
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

std::optional<std::string> unescape_path_element(std::string_view element) {
  if (element == "_") return std::string{};
  if (element.empty()) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < element.size(); ++i) {
    const auto c = static_cast<unsigned char>(element[i]);
    if (is_plain(c)) {
      out += element[i];
      continue;
    }
    if (c != '_' || i + 2 >= element.size()) return std::nullopt;
    const int high = hex_value(element[i + 1]);
    const int low = hex_value(element[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

std::string filesystem_object_path(std::string_view id) {
  return kFilesystemPathPrefix + escape_path_element(id);
}

std::uint64_t timestamp_usec(const std::optional<TimePoint>& t) {
  if (!t) return 0;
  const std::int64_t usec = to_usec(*t);
  return usec > 0 ? static_cast<std::uint64_t>(usec) : 0;
}

std::uint64_t duration_usec(Duration d) {
  return d.count() > 0 ? static_cast<std::uint64_t>(d.count()) : 0;
}

}  // namespace trimd::bus
