#include "options.hpp"

#include <getopt.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "utf8.hpp"

namespace trimctl {

namespace {

enum OptionId : int {
  kHelp = 'h',
  kQuiet = 'q',
  kFull = 'l',
  kVersion = 1000,
  kAddress,
  kJson,
  kNoPager,
  kNoLegend,
  kNoAskPassword,
  kWait,
  kIgnoreIdle,
};

const option kLongOptions[] = {
    {"help", no_argument, nullptr, kHelp},
    {"version", no_argument, nullptr, kVersion},
    {"address", required_argument, nullptr, kAddress},
    {"json", optional_argument, nullptr, kJson},
    {"no-pager", no_argument, nullptr, kNoPager},
    {"no-legend", no_argument, nullptr, kNoLegend},
    {"no-ask-password", no_argument, nullptr, kNoAskPassword},
    {"quiet", no_argument, nullptr, kQuiet},
    {"full", no_argument, nullptr, kFull},
    {"wait", no_argument, nullptr, kWait},
    {"ignore-idle", no_argument, nullptr, kIgnoreIdle},
    {nullptr, 0, nullptr, 0},
};

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// $DBUS_SYSTEM_BUS_ADDRESS needs no handling here: it names the system
// bus, and sd-bus reads it itself when opening that.
std::string default_address() { return environment("TRIMCTL_BUS_ADDRESS"); }

// "--json" alone is "short", as it always was.
JsonMode parse_json_mode(const char* value) {
  const std::string mode = value ? value : "short";
  if (mode == "short") return JsonMode::Short;
  if (mode == "pretty") return JsonMode::Pretty;
  if (mode == "off") return JsonMode::Off;
  throw UsageError("--json takes short, pretty or off, not '" + mode + "'");
}

[[noreturn]] void reject_option(char** argv, int failed_index, int code) {
  const std::string word = failed_index > 0 ? argv[failed_index - 1] : "";
  if (code == ':') throw UsageError("option '" + word + "' needs an argument");
  throw UsageError("unknown option '" + word + "'");
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options options;
  bool address_given = false;
  opterr = 0;  // our messages, not getopt's
  optind = 1;
  int code;
  // The leading ':' makes getopt report a missing argument as ':'.
  while ((code = getopt_long(argc, argv, ":hql", kLongOptions, nullptr)) != -1) {
    switch (code) {
      case kHelp: options.help = true; break;
      case kVersion: options.version = true; break;
      case kAddress:
        options.address = optarg;
        address_given = true;
        break;
      case kJson: options.json = parse_json_mode(optarg); break;
      case kNoPager: options.pager = false; break;
      case kNoLegend: options.legend = false; break;
      case kNoAskPassword: options.ask_password = false; break;
      case kQuiet: options.quiet = true; break;
      case kFull: options.full = true; break;
      case kWait: options.wait = true; break;
      case kIgnoreIdle: options.ignore_idle = true; break;
      default: reject_option(argv, optind, code);
    }
  }
  if (address_given && options.address.empty())
    throw UsageError("--address needs a bus address such as unix:path=/run/dbus/system_bus_socket");
  if (!address_given) options.address = default_address();
  if (optind < argc) options.command = argv[optind++];
  for (; optind < argc; ++optind) options.arguments.emplace_back(argv[optind]);
  return options;
}

std::string absolute_mount_point(const std::string& path) {
  if (path.empty()) throw UsageError("empty mount point");
  char resolved[PATH_MAX];
  const bool exists_here = realpath(path.c_str(), resolved) != nullptr;
  std::string absolute =
      exists_here ? resolved : std::filesystem::absolute(path).lexically_normal().string();
  while (absolute.size() > 1 && absolute.back() == '/') absolute.pop_back();
  // Bus strings are UTF-8: a path in trimd's escaped form (escape_bytes()),
  // which trimd maps back to the bytes. A path that does not exist here is
  // sent as typed when it is UTF-8: it may be a name as trimd shows it.
  if (exists_here || !trimd::is_valid_utf8(absolute)) return trimd::escape_bytes(absolute);
  return absolute;
}

std::vector<std::string> absolute_mount_points(const std::vector<std::string>& paths) {
  std::vector<std::string> absolute;
  absolute.reserve(paths.size());
  for (const auto& path : paths) absolute.push_back(absolute_mount_point(path));
  return absolute;
}

}  // namespace trimctl
