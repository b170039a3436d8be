#include "bus_commands.hpp"

#include <spdlog/spdlog.h>

#include <memory>

#include "bus_errors.hpp"
#include "daemon.hpp"

namespace trimd::bus {

Commands::Commands(Manager& manager, DaemonControl& control, Authorizer& authorizer,
                   PathInspector inspect)
    : manager_(manager), control_(control), authorizer_(authorizer), inspect_(std::move(inspect)) {}

TimePoint Commands::now() const { return control_.now(); }

std::vector<std::string> Commands::ids_for(const std::vector<std::string>& mount_points) const {
  return ids_for_mount_points(manager_, mount_points, inspect_);
}

void Commands::run(sdbus::Result<>&& result, const sdbus::Message* call, const std::string& method,
                   Prepare prepare) {
  // Result is move-only, the verdict callback must be copyable.
  auto reply = std::make_shared<sdbus::Result<>>(std::move(result));
  if (!call) {
    reply->returnError(make_error(ErrorKind::InvalidArgument, "no message is being processed"));
    return;
  }
  // Nothing about the paths the arguments name is looked at before the
  // caller is known to be allowed (their size was, by the caller of run()).
  authorizer_.check(
      *call, [this, reply, method, prepare = std::move(prepare)](const Verdict& verdict) {
        if (verdict.decision == Decision::Busy) {
          spdlog::info("{} refused: {}", method, verdict.why);
          reply->returnError(make_error(ErrorKind::Busy, busy_message(method, verdict.why)));
          return;
        }
        if (!verdict.allowed()) {
          spdlog::info("{} refused: {}", method, verdict.why);
          reply->returnError(
              make_error(ErrorKind::AccessDenied, access_denied_message(method, verdict.why)));
          return;
        }
        try {
          prepare()();
          control_.kick();
          reply->returnResults();
        } catch (...) {
          reply->returnError(current_exception_as_bus_error());
        }
      });
}

void Commands::run_on_mount_points(sdbus::Result<>&& result, const sdbus::Message* call,
                                   const std::string& method, std::vector<std::string> mount_points,
                                   Work work) {
  // Sizes first, before polkit is asked: an oversized call is not kept
  // while it answers, and its size tells nothing about the system.
  try {
    check_mount_point_list(mount_points);
  } catch (const sdbus::Error& e) {
    result.returnError(e);
    return;
  }
  auto given = std::make_shared<const std::vector<std::string>>(std::move(mount_points));
  run(std::move(result), call, method, [this, given, work]() -> Action {
    return [this, ids = ids_for(*given), work] { work(manager_, ids, now()); };
  });
}

void Commands::run_on_ids(sdbus::Result<>&& result, const sdbus::Message* call,
                          const std::string& method, std::vector<std::string> ids, Work work) {
  run(std::move(result), call, method, [this, ids = std::move(ids), work]() -> Action {
    return [this, ids, work] { work(manager_, ids, now()); };
  });
}

}  // namespace trimd::bus
