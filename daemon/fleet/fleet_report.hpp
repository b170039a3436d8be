// What `trimctl fleet` shows (GetFleet on the bus): for each backend this
// host's filesystems use, every claim in etcd in arrival order, the first
// max_concurrent holding slots. Read from etcd when asked, not cached.
#pragma once

#include <string>
#include <vector>

namespace trimd::fleet {

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
