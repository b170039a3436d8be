#include "bus_commands.hpp"

#include <spdlog/spdlog.h>

#include <memory>

#include "bus_errors.hpp"
#include "daemon.hpp"

namespace trimd::bus {

Commands::Commands(Manager& manager, DaemonControl& control, Authorizer& authorizer,
                   PathInspector inspect)
    : manager_(manager), control_(control), authorizer_(authorizer),
      inspect_(std::move(inspect)) {}

TimePoint Commands::now() const { return control_.now(); }

std::vector<std::string> Commands::ids_for(const std::vector<std::string>& mount_points) const {
  return ids_for_mount_points(manager_, mount_points, inspect_);
}

void Commands::run(sdbus::Result<>&& result, const sdbus::Message* call,
                   const std::string& method, const Prepare& prepare) {
  // Result is move-only, the verdict callback must be copyable.
  auto reply = std::make_shared<sdbus::Result<>>(std::move(result));
  Action action;
  try {
    if (!call) throw std::logic_error("no message is being processed");
    action = prepare();
  } catch (...) {
    reply->returnError(current_exception_as_bus_error());
    return;
  }
  authorizer_.check(*call, [this, reply, method, action](const Verdict& verdict) {
    if (!verdict.allowed) {
      spdlog::info("{} refused: {}", method, verdict.why);
      reply->returnError(
          make_error(ErrorKind::AccessDenied, access_denied_message(method, verdict.why)));
      return;
    }
    try {
      action();
      control_.kick();
      reply->returnResults();
    } catch (...) {
      reply->returnError(current_exception_as_bus_error());
    }
  });
}

void Commands::run_on_mount_points(sdbus::Result<>&& result, const sdbus::Message* call,
                                   const std::string& method,
                                   const std::vector<std::string>& mount_points, Work work) {
  run(std::move(result), call, method, [this, &mount_points, &work]() -> Action {
    return [this, ids = ids_for(mount_points), work] { work(manager_, ids, now()); };
  });
}

void Commands::run_on_ids(sdbus::Result<>&& result, const sdbus::Message* call,
                          const std::string& method, std::vector<std::string> ids, Work work) {
  run(std::move(result), call, method, [this, &ids, &work]() -> Action {
    return [this, ids, work] { work(manager_, ids, now()); };
  });
}

}  // namespace trimd::bus
