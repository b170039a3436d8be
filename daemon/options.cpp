#include "options.hpp"

#include <getopt.h>

#include "build_config.hpp"

namespace trimd {

namespace {

enum LongOnly { kBusAddress = 1000, kNoBus, kLogLevel, kLogFormat, kCatConfig };

LogFormat parse_log_format(const std::string& text) {
  if (text == "text") return LogFormat::Text;
  if (text == "json") return LogFormat::Json;
  throw UsageError("--log-format takes text or json, not '" + text + "'");
}

const option kLongOptions[] = {
    {"config", required_argument, nullptr, 'c'},
    {"state-dir", required_argument, nullptr, 's'},
    {"foreground", no_argument, nullptr, 'f'},
    {"dry-run", no_argument, nullptr, 'n'},
    {"once", no_argument, nullptr, 'o'},
    {"check-config", no_argument, nullptr, 'C'},
    {"cat-config", no_argument, nullptr, kCatConfig},
    {"bus-address", required_argument, nullptr, kBusAddress},
    {"no-bus", no_argument, nullptr, kNoBus},
    {"log-level", required_argument, nullptr, kLogLevel},
    {"log-format", required_argument, nullptr, kLogFormat},
    {"version", no_argument, nullptr, 'V'},
    {"help", no_argument, nullptr, 'h'},
    {nullptr, 0, nullptr, 0},
};

}  // namespace

std::string usage_text(const char* program) {
  return std::string("Usage: ") + program + R"( [OPTIONS]
       )" +
         program + R"( --once [MOUNTPOINT...]
       )" +
         program + R"( --dry-run

Keep SSDs and thin-provisioned storage trimmed in the background: FITRIM in
throttled chunks, only while the disks below each filesystem are idle.

Options:
  -c, --config FILE      policy file (default )" TRIMD_DEFAULT_CONFIG R"()
  -s, --state-dir DIR    where progress is kept (default )" TRIMD_DEFAULT_STATE_DIR R"()
  -f, --foreground       log to stderr (trimd never forks; accepted for scripts)
  -n, --dry-run          list filesystems, their disks, whether and when they
                         would be trimmed, then exit
  -o, --once             one pass over the named (or all eligible) filesystems,
                         honouring idleness, then exit
  -C, --check-config     parse the policy file and its drop-ins, report
                         errors, exit
      --cat-config       print the policy file and its drop-ins in the order
                         they are merged, then exit
      --bus-address ADDR D-Bus address to serve on instead of the system bus
      --no-bus           do not serve D-Bus at all
      --log-level LEVEL  trace, debug, info, warn or error
      --log-format FMT   text, or json: one object per line with the fields
                         the journal gets (default: the journal under
                         systemd, else text)
  -V, --version          print the version and exit
  -h, --help             print this help and exit

See trimd(8) and trimd.toml(5).
)";
}

Options parse_options(int argc, char** argv) {
  Options opts;
  opts.config_path = TRIMD_DEFAULT_CONFIG;
  opts.state_dir = TRIMD_DEFAULT_STATE_DIR;
  optind = 1;
  opterr = 0;  // we report errors ourselves, in one line
  int c;
  while ((c = getopt_long(argc, argv, ":c:s:fnoCVh", kLongOptions, nullptr)) != -1) {
    switch (c) {
      case 'c':
        opts.config_path = optarg;
        opts.config_given = true;
        break;
      case 's': opts.state_dir = optarg; break;
      case 'f': opts.foreground = true; break;
      case 'n': opts.dry_run = true; break;
      case 'o': opts.once = true; break;
      case 'C': opts.check_config = true; break;
      case kCatConfig: opts.cat_config = true; break;
      case kBusAddress: opts.bus_address = optarg; break;
      case kNoBus: opts.no_bus = true; break;
      case kLogLevel: opts.log_level = optarg; break;
      case kLogFormat: opts.log_format = parse_log_format(optarg); break;
      case 'V': opts.show_version = true; break;
      case 'h': opts.show_help = true; break;
      case ':':
        throw UsageError(std::string("option '") + argv[optind - 1] + "' needs an argument");
      default: throw UsageError(std::string("unknown option '") + argv[optind - 1] + "'");
    }
  }
  for (int i = optind; i < argc; ++i) opts.once_mount_points.emplace_back(argv[i]);
  if (!opts.once && !opts.once_mount_points.empty())
    throw UsageError("mount points are only accepted with --once");
  if (int(opts.once) + int(opts.dry_run) + int(opts.check_config) + int(opts.cat_config) > 1)
    throw UsageError("--once, --dry-run, --check-config and --cat-config exclude each other");
  return opts;
}

PolicySources policy_sources(const Options& options) {
  if (options.config_given) return given_policy_sources(options.config_path);
  return default_policy_sources(options.config_path, TRIMD_VENDOR_DROP_IN_DIR,
                                TRIMD_RUNTIME_DROP_IN_DIR);
}

}  // namespace trimd
