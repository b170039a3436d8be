#include "private_bus.hpp"

#include <chrono>
#include <stdexcept>

namespace trimd::test {

PrivateBus::PrivateBus(Rules rules) : dir_("trimd-bus-") {
  const std::string config =
      rules == Rules::SystemBus ? TRIMD_TEST_BUS_SYSTEM_CONF : TRIMD_TEST_BUS_OPEN_CONF;
  const std::string log = (dir_.path() / "dbus-daemon.log").string();
  ChildOptions options;
  options.stderr_path = log;
  daemon_.emplace(std::vector<std::string>{"dbus-daemon", "--config-file=" + config,
                                           "--address=unix:path=" + (dir_.path() / "bus").string(),
                                           "--nofork", "--nopidfile", "--print-address=1"},
                  options);
  // The address is printed once the socket listens.
  const auto line = daemon_->read_line(std::chrono::seconds{10});
  if (!line || line->empty()) throw std::runtime_error("dbus-daemon did not start; see " + log);
  address_ = *line;
}

std::vector<std::string> PrivateBus::busctl(std::vector<std::string> args) const {
  args.insert(args.begin(), {"busctl", "--address=" + address_});
  return args;
}

std::vector<std::string> PrivateBus::dbus_send(std::vector<std::string> args) const {
  args.insert(args.begin(), {"dbus-send", "--bus=" + address_, "--print-reply"});
  return args;
}

}  // namespace trimd::test
