// The D-Bus face of the daemon (org.trimd.trimd1). Thin: converts types and
// calls the manager; all traffic on the loop thread.
#pragma once

#include <memory>
#include <stdexcept>

#include "event_loop.hpp"
#include "manager.hpp"
#include "options.hpp"

namespace trimd {

class DaemonControl;
namespace bus {
class BusConnection;
}

class BusService {
 public:
  virtual ~BusService() = default;
  // The connection the service talks on: logind and UPower are asked on
  // it too (bus_logind.hpp, bus_upower.hpp).
  virtual bus::BusConnection& connection() = 0;
};

// The bus is there but another process owns org.trimd.trimd1.
class BusNameTaken : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Connects to the bus named by the options (system bus by default), claims
// org.trimd.trimd1 and exports the objects. Returns nothing (and logs why)
// when no bus can be reached: trimd still trims without one. Throws
// BusNameTaken when another trimd already serves there.
std::unique_ptr<BusService> make_bus_service(EventLoop& loop, Manager& manager,
                                             DaemonControl& control, const Options& options);

}  // namespace trimd
