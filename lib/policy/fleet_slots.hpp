// The names of the fleet's slots (docs/fleet.md): each filesystem that
// wants to trim puts one key under its backend's prefix, attached to its
// host's lease; the first max_concurrent keys by create revision hold the
// slots (daemon/fleet/claim_view.hpp decides), the others wait in that
// order, so no host starves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "time.hpp"

namespace trimd {

// What etcd's claims say of one filesystem's claim, told to the engine on
// every change (daemon/fleet/fleet_coordinator.hpp).
enum class SlotAnswer {
  Granted,      // among the first max_concurrent: trim
  Waiting,      // behind others, in arrival order
  Lost,         // the claim is gone (the lease expired): stop, ask again
  Unreachable,  // etcd does not answer: on_unreachable decides
};
const char* to_string(SlotAnswer answer);  // "granted", "waiting", "lost", "unreachable"

// "/trimd/v1/<backend>/", under which every claim on `backend` lives.
std::string slot_prefix(std::string_view backend);

// The key of one filesystem's claim: the prefix, the host, and the
// filesystem id with every byte outside [A-Za-z0-9._-] as %XX, so that an
// id (which may hold '/') stays one path element.
std::string slot_key(std::string_view backend, std::string_view host, std::string_view fs_id);

// The host and filesystem id of a key that slot_key() could have made
// under `prefix` (each element non-empty, in its alphabet, %XX decoded);
// nothing for any other key.
struct SlotKeyParts {
  std::string host;
  std::string fs_id;
};
std::optional<SlotKeyParts> parse_slot_key(std::string_view prefix, std::string_view key);

// A slot is held only while something is trimmed: a pass preempted or
// paused for longer than one lease TTL gives it back (and queues again
// when it can go on).
bool keep_slot_while_held_up(Duration held_up_for, Duration lease_ttl);

}  // namespace trimd
