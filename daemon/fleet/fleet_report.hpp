// What the fleet tells the rest of trimd, as plain data (no JSON, no
// libcurl, so the daemon's files that use it stay cheap to compile): a
// claim's news for the engine, and what `trimctl fleet` shows (GetFleet on
// the bus): for each backend this host's filesystems use, every claim in
// etcd in arrival order, the first max_concurrent holding slots. Read from
// etcd when asked, not cached.
#pragma once

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

struct FleetClaimRow {
  std::string backend;
  unsigned max_concurrent = 0;
  unsigned position = 0;  // 1 = the oldest claim
  std::string host;
  std::string mount_point;
  bool holds = false;  // among the first max_concurrent
  bool ours = false;   // a claim of this trimd
};

struct FleetReport {
  enum class Status { Ok, NotConfigured, Unreachable };
  Status status = Status::Ok;
  std::string error;  // Unreachable: etcd's error
  std::vector<FleetClaimRow> rows;
};

}  // namespace trimd::fleet
