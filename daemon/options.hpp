// trimd's command line.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "policy_files.hpp"

namespace trimd {

// Where log lines go and how: the journal natively when stderr is the
// journal stream systemd set up, else text; or JSON lines on stderr.
enum class LogFormat { Auto, Text, Json };

struct Options {
  std::string config_path;
  bool config_given = false;  // --config: a missing file is then an error
  std::string state_dir;
  std::optional<std::string> bus_address;  // --bus-address; else the system bus
  bool no_bus = false;                     // --no-bus
  bool foreground = false;
  bool dry_run = false;
  bool once = false;
  std::vector<std::string> once_mount_points;
  bool check_config = false;
  bool cat_config = false;  // --cat-config
  bool show_version = false;
  bool show_help = false;
  std::optional<std::string> log_level;  // --log-level overrides the config
  LogFormat log_format = LogFormat::Auto;
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws UsageError with a one-line message.
Options parse_options(int argc, char** argv);
// The files the policy is read from: --config FILE and FILE.d, or the
// default file and the drop-in directories of trimd.toml(5).
PolicySources policy_sources(const Options& options);
std::string usage_text(const char* program);

}  // namespace trimd
