// Who holds a slot of a shared backend: pure decisions over what etcd's
// range of the backend's prefix returned (docs/fleet.md). Each filesystem
// that wants to trim puts one key under the prefix, attached to its host's
// lease; the first max_concurrent keys by create revision hold the slots,
// the others wait in that order, so no host starves.
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

// One key under the prefix: a filesystem waiting for or holding a slot.
struct SlotClaim {
  std::string key;
  std::int64_t create_revision = 0;  // etcd's: the order of arrival
  std::string host;
  std::string mount_point;

  bool operator==(const SlotClaim&) const = default;
};

// Where one claim stands.
struct SlotStanding {
  bool holds = false;
  std::size_t ahead = 0;           // waiting: claims that get a slot first
  std::vector<SlotClaim> holders;  // oldest first
};

// "/trimd/v1/<backend>/", under which every claim on `backend` lives.
std::string slot_prefix(std::string_view backend);

// The key of one filesystem's claim: the prefix, the host, and the
// filesystem id with every byte outside [A-Za-z0-9._-] as %XX, so that an
// id (which may hold '/') stays one path element.
std::string slot_key(std::string_view backend, std::string_view host, std::string_view fs_id);

// Where `my_key` stands among `claims` (any order, as a range returns
// them); nothing when it is not among them: its lease expired, the slot is
// lost. Ties of create revision (one transaction) go by key.
std::optional<SlotStanding> standing_of(std::vector<SlotClaim> claims, std::string_view my_key,
                                        unsigned max_concurrent);

// "pool-a: 2/2 slots held by web3:/srv, db1:/var", for WaitingFor's reason.
std::string holders_text(std::string_view backend, const SlotStanding& standing,
                         unsigned max_concurrent);

// A slot is held only while something is trimmed: a pass preempted or
// paused for longer than one lease TTL gives it back (and queues again
// when it can go on).
bool keep_slot_while_held_up(Duration held_up_for, Duration lease_ttl);

}  // namespace trimd
