// A dbus-daemon of the test's own, on a unix socket in a temporary
// directory that other users may enter (a test may call as uid 65534).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "temp_dir.hpp"

namespace trimd::test {

class PrivateBus {
 public:
  enum class Rules {
    // Shaped like the system bus (bus-system.conf.in): anyone may connect,
    // root may do anything, other users exactly what trimd's own policy
    // file (systemd/org.trimd.trimd1.conf) grants them.
    SystemBus,
    // Anyone may own and call anything (bus-open.conf): for tests that are
    // not about the bus policy (trimctl against the fake trimd).
    Open,
  };

  // Throws std::runtime_error when dbus-daemon does not come up.
  explicit PrivateBus(Rules rules = Rules::SystemBus);

  const std::string& address() const { return address_; }
  const std::filesystem::path& directory() const { return dir_.path(); }
  // "busctl --address=<this bus>" and then `args`.
  std::vector<std::string> busctl(std::vector<std::string> args) const;
  // "dbus-send --bus=<this bus> --print-reply" and then `args`: it prints
  // error names, which busctl does not.
  std::vector<std::string> dbus_send(std::vector<std::string> args) const;

 private:
  TempDir dir_;
  std::optional<ChildProcess> daemon_;  // after dir_: stopped before it is removed
  std::string address_;
};

}  // namespace trimd::test
