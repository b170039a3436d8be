#include "fleet_slots.hpp"

#include <fmt/format.h>

namespace trimd {

namespace {

bool plain_key_byte(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string key_element(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (plain_key_byte(c))
      out += c;
    else
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // key_element() writes upper case only
}

// One element of a key as key_element() wrote it, decoded.
std::optional<std::string> decode_key_element(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (plain_key_byte(text[i])) {
      out += text[i];
      continue;
    }
    if (text[i] != '%' || i + 2 >= text.size()) return std::nullopt;
    const int high = hex_digit(text[i + 1]);
    const int low = hex_digit(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

}  // namespace

const char* to_string(SlotAnswer answer) {
  switch (answer) {
    case SlotAnswer::Granted: return "granted";
    case SlotAnswer::Waiting: return "waiting";
    case SlotAnswer::Lost: return "lost";
    case SlotAnswer::Unreachable: return "unreachable";
  }
  return "unknown";
}

std::string slot_prefix(std::string_view backend) {
  return fmt::format("/trimd/v1/{}/", key_element(backend));
}

std::string slot_key(std::string_view backend, std::string_view host, std::string_view fs_id) {
  return slot_prefix(backend) + key_element(host) + "/" + key_element(fs_id);
}

std::optional<SlotKeyParts> parse_slot_key(std::string_view prefix, std::string_view key) {
  if (!key.starts_with(prefix)) return std::nullopt;
  key.remove_prefix(prefix.size());
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto host = decode_key_element(key.substr(0, slash));
  auto fs_id = decode_key_element(key.substr(slash + 1));
  if (!host || !fs_id) return std::nullopt;
  return SlotKeyParts{std::move(*host), std::move(*fs_id)};
}

bool keep_slot_while_held_up(Duration held_up_for, Duration lease_ttl) {
  return held_up_for <= lease_ttl;
}

}  // namespace trimd
