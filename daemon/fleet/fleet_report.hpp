// What the fleet tells the rest of trimd, as plain data (no JSON, no
// libcurl, so the daemon's files that use it stay cheap to compile): a
// claim's news for the engine, and what `trimctl fleet` shows (GetFleet on
// the bus): for each backend this host's filesystems use, the claims in
// arrival order, the first max_concurrent that count holding slots. Bounded
// whatever etcd holds: a page of rows per backend and a summary that counts
// the rest (docs/fleet.md, "Trust").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleet_slots.hpp"

namespace trimd::fleet {

// What a filesystem's claim came to; told on every change.
struct SlotNews {
  std::string fs_id;
  using Kind = SlotAnswer;
  Kind kind = Kind::Waiting;
  std::string reason;  // holders_text() while waiting, the error otherwise
};

// What is wrong with a key under a backend's prefix. Whether it counts as
// a claim on a slot rests on what etcd itself vouches for (the key and its
// lease), never on the value its writer chose, so that a claim counts the
// same whichever read served it (a read of keys only has no values).
enum class ClaimFault {
  None,
  NoLease,         // not counted: nothing ends it, a crashed writer's would hold a slot for ever
  BadKey,          // not counted: not <prefix><host>/<filesystem id> in slot_key()'s alphabet
  BadValue,        // counted, its names unknown: not the JSON object trimd writes
  OversizedValue,  // counted, its names unknown: a value over the bound
  NoValue,         // counted, its names unknown: read without values (a read over the bound)
};
const char* to_string(ClaimFault fault);  // "no lease", ...
bool counts(ClaimFault fault);

// Rows of one backend in a report: the first claims that count, this host's
// own wherever they stand, and the first ignored keys.
inline constexpr std::size_t kReportRowsPerBackend = 64;
inline constexpr std::size_t kReportIgnoredPerBackend = 16;

struct FleetClaimRow {
  std::string backend;
  unsigned max_concurrent = 0;
  unsigned position = 0;  // 1 = the oldest claim that counts; 0 for one that does not
  std::string host;
  std::string mount_point;
  bool holds = false;  // among the first max_concurrent that count
  bool ours = false;   // a claim of this trimd
  ClaimFault fault = ClaimFault::None;
};

struct FleetBackendSummary {
  std::string backend;
  unsigned max_concurrent = 0;
  std::uint64_t counted = 0;   // claims that count, among those read
  std::uint64_t ignored = 0;   // keys that do not, among those read
  bool names_unread = false;   // the last read was of keys only: its values were over the bound
  std::uint64_t unread = 0;    // keys past the read's bound: counted by etcd only
  std::uint64_t unlisted = 0;  // claims read but not in the rows
  std::string error;           // why this backend could not be read
};

struct FleetReport {
  enum class Status { Ok, NotConfigured, Unreachable, Busy };
  Status status = Status::Ok;
  std::string error;  // Unreachable, Busy: why
  std::vector<FleetClaimRow> rows;
  std::vector<FleetBackendSummary> backends;
};

}  // namespace trimd::fleet
