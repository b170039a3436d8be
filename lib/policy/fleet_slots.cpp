#include "fleet_slots.hpp"

#include <algorithm>

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

bool arrived_before(const SlotClaim& a, const SlotClaim& b) {
  if (a.create_revision != b.create_revision) return a.create_revision < b.create_revision;
  return a.key < b.key;
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

std::optional<SlotStanding> standing_of(std::vector<SlotClaim> claims, std::string_view my_key,
                                        unsigned max_concurrent) {
  std::sort(claims.begin(), claims.end(), arrived_before);
  const auto mine = std::find_if(claims.begin(), claims.end(),
                                 [&](const SlotClaim& c) { return c.key == my_key; });
  if (mine == claims.end()) return std::nullopt;
  const auto slots = std::min<std::size_t>(max_concurrent, claims.size());
  const auto position = static_cast<std::size_t>(mine - claims.begin());
  SlotStanding standing;
  standing.holds = position < slots;
  standing.ahead = standing.holds ? 0 : position - slots + 1;
  standing.holders.assign(claims.begin(), claims.begin() + static_cast<std::ptrdiff_t>(slots));
  return standing;
}

std::string holders_text(std::string_view backend, const SlotStanding& standing,
                         unsigned max_concurrent) {
  std::string holders;
  for (const auto& claim : standing.holders)
    holders += (holders.empty() ? "" : ", ") + claim.host + ":" + claim.mount_point;
  return fmt::format("{}: {}/{} slots held by {}", backend, standing.holders.size(), max_concurrent,
                     holders.empty() ? "nobody" : holders);
}

bool keep_slot_while_held_up(Duration held_up_for, Duration lease_ttl) {
  return held_up_for <= lease_ttl;
}

}  // namespace trimd
