// The commands that are one method call each.
#include "commands.hpp"

#include <stdexcept>

#include "units.hpp"

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
  try {
    trimd::parse_size(options.arguments.at(1));
  } catch (const std::invalid_argument& error) {
    throw UsageError(error.what());
  }
}

int notify_freed_command(Client& client, const Options& options) {
  client.notify_freed(absolute_mount_point(options.arguments.at(0)),
                      trimd::parse_size(options.arguments.at(1)));
  return kExitOk;
}

}  // namespace trimctl
