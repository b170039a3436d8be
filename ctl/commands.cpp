// The commands that are one method call each.
#include "commands.hpp"

#include "format.hpp"

namespace trimctl {

int pause_command(Client& client, const Options& options) {
  client.pause(absolute_mount_points(options.arguments));
  return kExitOk;
}

int resume_command(Client& client, const Options& options) {
  client.resume(absolute_mount_points(options.arguments));
  return kExitOk;
}

int cancel_command(Client& client, const Options& options) {
  client.cancel(absolute_mount_points(options.arguments));
  return kExitOk;
}

int reload_command(Client& client, const Options& /*options*/) {
  client.reload();
  return kExitOk;
}

void validate_notify_freed(const Options& options) {
  if (!parse_bytes(options.arguments.at(1)))
    throw UsageError("'" + options.arguments[1] + "' is not a size (say e.g. 50GiB, 1.5T or 4096)");
}

int notify_freed_command(Client& client, const Options& options) {
  client.notify_freed(absolute_mount_point(options.arguments.at(0)),
                      *parse_bytes(options.arguments.at(1)));
  return kExitOk;
}

}  // namespace trimctl
