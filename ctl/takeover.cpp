// trimctl takeover / release: inline discard handed to trimd and back, and
// what status says about it.
#include <cstdio>

#include "commands.hpp"
#include "format.hpp"
#include "report.hpp"

namespace trimctl {

std::string takeover_note(const FilesystemInfo& fs) {
  if (fs.takeover == "taken-over")
    return fs.mount_point + ": inline discard taken over by trimd" +
           (fs.taken_over_since ? " since " + format_timestamp(fs.taken_over_since) : "") +
           " ('trimctl release " + fs.mount_point + "' gives it back)";
  if (fs.takeover == "not-possible")
    return fs.mount_point + ": mounted with 'discard', not taken over: " + fs.takeover_reason;
  if (fs.takeover == "failed")
    return fs.mount_point + ": taking over inline discard failed: " + fs.takeover_reason;
  return "";
}

int takeover_command(Client& client, const Options& options) {
  client.take_over(absolute_mount_points(options.arguments));
  return kExitOk;
}

int release_command(Client& client, const Options& options) {
  client.hand_back(absolute_mount_points(options.arguments));
  return kExitOk;
}

}  // namespace trimctl
