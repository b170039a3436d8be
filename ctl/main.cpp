// trimctl: the command-line client of trimd's D-Bus API (org.trimd.trimd1).
#include <array>
#include <cstdio>
#include <limits>
#include <string>

#include "client.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "polkit_agent.hpp"
#include "terminal_text.hpp"
#include "trimctl_paths.hpp"

using namespace trimctl;

namespace {

struct Command {
  const char* name;
  const char* synopsis;
  std::size_t min_arguments;
  std::size_t max_arguments;
  int (*run)(Client&, const Options&);
  void (*validate)(const Options&);  // may be null
  bool changes_work;                 // needs root or polkit's yes
};

constexpr std::size_t kAny = std::numeric_limits<std::size_t>::max();

constexpr std::array<Command, 12> kCommands{{
    {"status", "[MOUNT...]", 0, kAny, status_command, nullptr, false},
    {"trim", "[MOUNT...] [--ignore-idle] [--wait]", 0, kAny, trim_command, nullptr, true},
    {"pause", "[MOUNT...]", 0, kAny, pause_command, nullptr, true},
    {"resume", "[MOUNT...]", 0, kAny, resume_command, nullptr, true},
    {"cancel", "[MOUNT...]", 0, kAny, cancel_command, nullptr, true},
    {"reload", "", 0, 0, reload_command, nullptr, true},
    {"notify-freed", "MOUNT BYTES", 2, 2, notify_freed_command, validate_notify_freed, true},
    {"monitor", "", 0, 0, monitor_command, nullptr, false},
    {"takeover", "MOUNT...", 1, kAny, takeover_command, nullptr, true},
    {"release", "MOUNT...", 1, kAny, release_command, nullptr, true},
    {"history", "[MOUNT]", 0, 1, history_command, nullptr, false},
    {"fleet", "", 0, 0, fleet_command, nullptr, false},
}};

void print_help() {
  std::printf(
      "Usage: trimctl [OPTIONS] COMMAND [ARGUMENTS]\n"
      "Control trimd, which trims SSDs and thin-provisioned storage while they are idle.\n"
      "\n"
      "Commands:\n"
      "  status [MOUNT...]            Show the tracked filesystems (the default command)\n"
      "  trim [MOUNT...]              Start a pass now (all eligible filesystems without MOUNT)\n"
      "      --ignore-idle            ...without waiting for the disks to go idle\n"
      "      --wait                   ...and follow it until it ends; exit 1 unless all succeed\n"
      "  pause [MOUNT...]             Hold trimming (everything without MOUNT)\n"
      "  resume [MOUNT...]            Undo pause\n"
      "  cancel [MOUNT...]            End the current passes\n"
      "  reload                       Make trimd re-read its policy\n"
      "                               (" TRIMCTL_TRIMD_CONFIG
      ")\n"
      "  notify-freed MOUNT BYTES     Say BYTES (e.g. 50GiB) were freed, so MOUNT is trimmed soon\n"
      "  monitor                      Print trimd's events as they happen, until interrupted\n"
      "  takeover MOUNT...            Remount MOUNT without inline 'discard'; trimd trims it "
      "instead\n"
      "  release MOUNT...             Give MOUNT its 'discard' back (undo takeover)\n"
      "  history [MOUNT]              Show the last passes trimd remembers (10 per filesystem)\n"
      "  fleet                        Show who holds and who waits for the shared backends' slots\n"
      "\n"
      "Options:\n"
      "      --address ADDRESS        D-Bus address of the bus trimd is on\n"
      "                               (default: $TRIMCTL_BUS_ADDRESS, $DBUS_SYSTEM_BUS_ADDRESS,\n"
      "                               else the system bus)\n"
      "      --json[=MODE]            Machine-readable output (status, history, fleet, trim "
      "--wait,\n"
      "                               monitor): short (the default), pretty or off\n"
      "      --no-legend              Print the table rows only: no header, summary or notes\n"
      "  -l, --full                   Do not shorten cells to fit the terminal\n"
      "  -q, --quiet                  Print nothing; the exit status tells\n"
      "      --no-ask-password        Do not start a polkit agent to ask for a password\n"
      "      --no-pager               Do not pipe status through $SYSTEMD_PAGER, $PAGER or less\n"
      "  -h, --help                   Show this help\n"
      "      --version                Show the version\n"
      "\n"
      "Exit status: 0 ok, 1 the operation failed, 2 usage error, 3 trimd not reachable.\n"
      "See trimctl(1).\n");
}

const Command& find_command(const Options& options) {
  for (const auto& command : kCommands)
    if (options.command == command.name) return command;
  throw UsageError("unknown command '" + options.command + "'");
}

void check_arguments(const Command& command, const Options& options) {
  const std::size_t count = options.arguments.size();
  if (count < command.min_arguments || count > command.max_arguments)
    throw UsageError(std::string("usage: trimctl ") + command.name +
                     (*command.synopsis ? " " : "") + command.synopsis);
  if ((options.wait || options.ignore_idle) && options.command != "trim")
    throw UsageError("--wait and --ignore-idle go with 'trim' only");
  if (command.validate) command.validate(options);
}

// The daemon's own words first, then what the user can do about it.
std::string hint_for(const std::string& error_name) {
  const auto reason = error_name.substr(error_name.rfind('.') + 1);
  if (reason == "AccessDenied") return "; changing trimd's work needs root (try sudo)";
  if (reason == "NotFound") return "; 'trimctl status' lists the filesystems trimd tracks";
  if (reason == "ConfigInvalid") return "; fix the file, then run 'trimctl reload' again";
  if (reason == "Busy") return "; try again in a moment";
  return "";
}

int run(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  options.terminal = detect_terminal();
  if (options.help || options.command == "help") {
    print_help();
    return kExitOk;
  }
  if (options.version) {
    std::printf("trimctl %s\n", TRIMCTL_VERSION);
    return kExitOk;
  }
  const Command& command = find_command(options);
  check_arguments(command, options);
  // Before connecting: polkit must know the agent when trimd asks it.
  const auto agent = command.changes_work ? start_polkit_agent(options.ask_password) : nullptr;
  Client client(options.address);
  if (agent) client.allow_time_to_authenticate();
  return command.run(client, options);
}

}  // namespace

namespace {

// Errors quote what they are about (a mount point, trimd's own message).
int report_error(const std::string& message, int exit_status) {
  std::fputs(text_line("trimctl: " + message).c_str(), stderr);
  return exit_status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& error) {
    return report_error(std::string(error.what()) + " (see 'trimctl --help')", kExitUsage);
  } catch (const Unreachable& error) {
    return report_error(error.what(), kExitUnreachable);
  } catch (const BusError& error) {
    return report_error(
        std::string(error.what()) + " (" + error.name() + ")" + hint_for(error.name()),
        kExitFailed);
  } catch (const std::exception& error) {
    return report_error(error.what(), kExitFailed);
  }
}
