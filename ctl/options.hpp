// trimctl's command line: global options, the command and its arguments.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "terminal.hpp"

namespace trimctl {

// Wrong command line: exit status 2.
class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --json: off, one line (plain --json), or indented for people.
enum class JsonMode { Off, Short, Pretty };

struct Options {
  std::string command = "status";
  std::vector<std::string> arguments;
  // Bus to use: --address, else $TRIMCTL_BUS_ADDRESS; empty means the
  // system bus (at $DBUS_SYSTEM_BUS_ADDRESS when that is set).
  std::string address;
  JsonMode json = JsonMode::Off;
  bool legend = true;        // --no-legend: rows only, for scripts
  bool quiet = false;        // -q: say nothing; the exit status tells
  bool full = false;         // -l: never shorten a cell to fit the terminal
  bool pager = true;         // --no-pager: status never pages
  bool ask_password = true;  // --no-ask-password: no polkit agent
  bool wait = false;
  bool ignore_idle = false;
  bool help = false;
  bool version = false;
  // Not from the command line: where the output goes (see terminal.hpp).
  Terminal terminal;

  bool json_output() const { return json != JsonMode::Off; }
};

// Options may come before or after the command. Throws UsageError.
Options parse_options(int argc, char** argv);

// The path made absolute without a trailing slash: realpath() when it
// exists, else lexically (trimd may know mounts this client cannot see);
// escaped as trimd shows names (escape_bytes()) when it exists here or is
// not UTF-8, else as typed (it may be a name as trimd shows it).
std::string absolute_mount_point(const std::string& path);
std::vector<std::string> absolute_mount_points(const std::vector<std::string>& paths);

}  // namespace trimctl
