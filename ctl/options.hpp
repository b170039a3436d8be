// trimctl's command line: global options, the command and its arguments.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace trimctl {

// Wrong command line: exit status 2.
class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string command = "status";
  std::vector<std::string> arguments;
  // Bus to use: --address, else $TRIMCTL_BUS_ADDRESS; empty means the
  // system bus (at $DBUS_SYSTEM_BUS_ADDRESS when that is set).
  std::string address;
  bool json = false;
  bool wait = false;
  bool ignore_idle = false;
  bool help = false;
  bool version = false;
};

// Options may come before or after the command. Throws UsageError.
Options parse_options(int argc, char** argv);

// The path made absolute without a trailing slash: realpath() when it
// exists, else lexically (trimd may know mounts this client cannot see).
std::string absolute_mount_point(const std::string& path);
std::vector<std::string> absolute_mount_points(const std::vector<std::string>& paths);

}  // namespace trimctl
