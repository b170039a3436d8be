// A dbus-daemon of the test's own, on a unix socket in a fresh temporary
// directory, with tests/ctl/bus.conf (anyone may own and call anything).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace trimctl_test {

class PrivateBus {
 public:
  // Throws std::runtime_error when dbus-daemon does not come up.
  explicit PrivateBus(const std::string& dbus_daemon);
  ~PrivateBus();  // stops the daemon and removes the directory
  PrivateBus(const PrivateBus&) = delete;
  PrivateBus& operator=(const PrivateBus&) = delete;

  const std::string& address() const { return address_; }
  const std::string& directory() const { return directory_; }

  // Where dbus-daemon is, looked up in $PATH.
  static std::optional<std::string> find_dbus_daemon();

 private:
  void stop();

  std::string directory_;
  std::string address_;
  pid_t pid_ = -1;
};

// A program in $PATH, e.g. python3.
std::optional<std::string> find_program(const std::string& name);

}  // namespace trimctl_test
