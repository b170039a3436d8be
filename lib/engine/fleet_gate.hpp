// The engine's one window on the fleet (docs/fleet.md): before a pass on a
// filesystem that shares a backend trims anything, it asks for a slot here,
// and gives the slot back when it stops trimming. The daemon implements it
// over etcd (daemon/fleet/); unit tests with a fake. Answers come back
// later, on the loop thread, through Manager::fleet_answer().
#pragma once

#include <string>

namespace trimd {

class FleetGate {
 public:
  virtual ~FleetGate() = default;
  // Queue `fs_id` for one of `backend`'s slots; asked once until given back.
  virtual void ask(const std::string& fs_id, const std::string& backend,
                   const std::string& mount_point) = 0;
  // The slot, or the place in the queue, is not wanted any more.
  virtual void give_back(const std::string& fs_id) = 0;
};

}  // namespace trimd
