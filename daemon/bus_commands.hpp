// What every state-changing method does around its own work: authorize the
// caller, then check the arguments, run the work on the manager, wake the
// loop, and answer with the result or the fitting org.trimd.trimd1.Error.
// An unauthorized caller learns nothing but AccessDenied.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <sdbus-c++/Message.h>
#include <sdbus-c++/MethodResult.h>

#include "bus_auth.hpp"
#include "bus_mount_points.hpp"
#include "manager.hpp"

namespace trimd {
class DaemonControl;
}

namespace trimd::bus {

class Commands {
 public:
  using Action = std::function<void()>;
  // Checks the arguments (throws sdbus::Error) and returns the work to do;
  // called only for an authorized caller.
  using Prepare = std::function<Action()>;
  // Manager work on a list of filesystem ids (empty = all).
  using Work = std::function<void(Manager&, const std::vector<std::string>& ids, TimePoint now)>;

  Commands(Manager& manager, DaemonControl& control, Authorizer& authorizer, PathInspector inspect);

  // `call` is the message being served; `method` names it in errors.
  void run(sdbus::Result<>&& result, const sdbus::Message* call, const std::string& method,
           Prepare prepare);
  // The common cases: `work` on the filesystems mounted at `mount_points`
  // (checked and resolved once the caller is authorized), or on known ids.
  void run_on_mount_points(sdbus::Result<>&& result, const sdbus::Message* call,
                           const std::string& method, std::vector<std::string> mount_points,
                           Work work);
  void run_on_ids(sdbus::Result<>&& result, const sdbus::Message* call, const std::string& method,
                  std::vector<std::string> ids, Work work);

  std::vector<std::string> ids_for(const std::vector<std::string>& mount_points) const;
  Manager& manager() { return manager_; }
  DaemonControl& control() { return control_; }
  TimePoint now() const;

 private:
  Manager& manager_;
  DaemonControl& control_;
  Authorizer& authorizer_;
  PathInspector inspect_;
};

}  // namespace trimd::bus
