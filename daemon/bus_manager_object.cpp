#include "bus_manager_object.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>

#include "bus_errors.hpp"
#include "bus_mount_points.hpp"
#include "bus_names.hpp"
#include "daemon.hpp"

namespace trimd::bus {

namespace {

std::map<std::string_view, BusValue> manager_values(const ManagerSources& sources) {
  std::map<std::string_view, BusValue> values;
  for (const auto& property : manager_properties()) values[property.name] = property.value(sources);
  return values;
}

}  // namespace

ManagerObject::ManagerObject(sdbus::IConnection& connection, Commands& commands,
                             const EventLoop& loop)
    : ManagerAdaptor(connection, kManagerPath), commands_(commands), loop_(loop),
      announced_(manager_values(sources())) {
  registerAdaptor();
}

ManagerObject::~ManagerObject() { unregisterAdaptor(); }

void ManagerObject::announce_changes() {
  auto now = manager_values(sources());
  std::vector<std::string> names;
  for (const auto& [name, value] : now)
    if (announced_[name] != value && signals_changes(name)) names.emplace_back(name);
  announced_ = std::move(now);
  if (!names.empty()) emitPropertiesChangedSignal(kManagerInterface, names);
}

const sdbus::Message* ManagerObject::current_call() const {
  return getObject().getCurrentlyProcessedMessage();
}

void ManagerObject::TrimNow(sdbus::Result<>&& result, std::vector<std::string> mount_points,
                            bool ignore_idle) {
  commands_.run_on_mount_points(std::move(result), current_call(), "Manager.TrimNow",
                                std::move(mount_points),
                                [ignore_idle](Manager& m, const auto& ids, TimePoint now) {
                                  m.trim_now(ids, ignore_idle, now);
                                });
}

void ManagerObject::Pause(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(
      std::move(result), current_call(), "Manager.Pause", std::move(mount_points),
      [](Manager& m, const auto& ids, TimePoint now) { m.pause(ids, now); });
}

void ManagerObject::Resume(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(
      std::move(result), current_call(), "Manager.Resume", std::move(mount_points),
      [](Manager& m, const auto& ids, TimePoint now) { m.resume(ids, now); });
}

void ManagerObject::Cancel(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(
      std::move(result), current_call(), "Manager.Cancel", std::move(mount_points),
      [](Manager& m, const auto& ids, TimePoint now) { m.cancel(ids, now); });
}

void ManagerObject::Reload(sdbus::Result<>&& result) {
  commands_.run(std::move(result), current_call(), "Manager.Reload",
                [this]() -> Commands::Action { return [this] { commands_.control().reload(); }; });
}

void ManagerObject::NotifyFreed(sdbus::Result<>&& result, std::string mount_point, uint64_t bytes) {
  commands_.run_on_mount_points(std::move(result), current_call(), "Manager.NotifyFreed",
                                {std::move(mount_point)},
                                [bytes](Manager& m, const auto& ids, TimePoint now) {
                                  m.notify_freed(ids.front(), bytes, now);
                                });
}

void ManagerObject::TakeOver(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(
      std::move(result), current_call(), "Manager.TakeOver", mount_points,
      [this](Manager&, const auto& ids, TimePoint) { commands_.control().take_over(ids); });
}

void ManagerObject::HandBack(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(
      std::move(result), current_call(), "Manager.HandBack", mount_points,
      [this](Manager&, const auto& ids, TimePoint) { commands_.control().hand_back(ids); });
}

namespace {

using HistoryEntries = std::vector<std::pair<std::string, PassHistoryEntry>>;

// The history at `given` (empty: all), named raw or escaped as MountPoint
// shows it. The error names what is wrong, never the text itself: it may be
// as big as the bus allows.
HistoryEntries history_at(const Manager& manager, const std::string& given) {
  check_bus_path_size(given);
  if (!given.empty() && given.front() != '/')
    throw make_error(ErrorKind::InvalidArgument,
                     "GetHistory takes an absolute mount point, or an empty string for all");
  const auto raw = raw_from_bus_string(given);
  try {
    return manager.history(raw.value_or(given));
  } catch (const ManagerError& e) {
    if (!raw || *raw == given || e.kind() != ManagerError::Kind::NotFound) throw to_bus_error(e);
  }
  try {
    return manager.history(given);  // a literal backslash, not an escape
  } catch (const ManagerError& e) {
    throw to_bus_error(e);
  }
}

}  // namespace

// Read-only: no authorization; a relative or unknown path is an error.
std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                          std::string, uint32_t>>
ManagerObject::GetHistory(const std::string& mount_point) {
  std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                            std::string, uint32_t>>
      out;
  for (const auto& [where, e] : history_at(commands_.manager(), mount_point))
    out.emplace_back(bus_string(where), timestamp_usec(e.start), timestamp_usec(e.end),
                     duration_usec(e.trimming), duration_usec(e.waited), e.bytes,
                     bus_string(e.result.text()),
                     static_cast<uint32_t>(std::min<std::uint64_t>(e.preemptions, UINT32_MAX)));
  return out;
}

namespace {

// A report that has no rows to give, as the error the caller gets.
std::optional<sdbus::Error> fleet_error(const fleet::FleetReport& report) {
  using Status = fleet::FleetReport::Status;
  switch (report.status) {
    case Status::Ok: return std::nullopt;
    case Status::NotConfigured:
      return make_error(ErrorKind::NotSupported,
                        "no [fleet] in the policy: passes are not coordinated");
    case Status::Unreachable: return make_error(ErrorKind::Unavailable, "etcd: " + report.error);
    case Status::Busy: return make_error(ErrorKind::Busy, "fleet: " + report.error);
  }
  return std::nullopt;
}

// The claim's note: why it does not count, or why its names are unknown.
std::string claim_note(fleet::ClaimFault fault) {
  return fault == fleet::ClaimFault::None ? std::string() : fleet::to_string(fault);
}

}  // namespace

// Read-only: no authorization. Answered from the coordinator's views (on
// the loop), bounded whatever etcd holds (fleet_report.hpp).
void ManagerObject::GetFleet(
    sdbus::Result<std::vector<sdbus::Struct<std::string, uint32_t, uint32_t, std::string,
                                            std::string, bool, bool>>>&& result) {
  // std::function wants a copyable callback; the reply object is move-only.
  auto reply = std::make_shared<std::decay_t<decltype(result)>>(std::move(result));
  commands_.control().fleet_report([reply](fleet::FleetReport report) {
    if (auto error = fleet_error(report)) return reply->returnError(*error);
    std::vector<
        sdbus::Struct<std::string, uint32_t, uint32_t, std::string, std::string, bool, bool>>
        claims;
    for (const auto& row : report.rows)
      if (fleet::counts(row.fault))  // keys that do not count: GetFleetView only
        claims.emplace_back(bus_string(row.backend), row.max_concurrent, row.position,
                            bus_string(row.host), bus_string(row.mount_point), row.holds, row.ours);
    reply->returnResults(claims);
  });
}

void ManagerObject::GetFleetView(
    sdbus::Result<std::vector<sdbus::Struct<std::string, uint32_t, uint64_t, uint64_t, uint64_t,
                                            uint64_t, bool, std::string>>,
                  std::vector<sdbus::Struct<std::string, uint32_t, uint32_t, std::string,
                                            std::string, bool, bool, std::string>>>&& result) {
  auto reply = std::make_shared<std::decay_t<decltype(result)>>(std::move(result));
  commands_.control().fleet_report([reply](fleet::FleetReport report) {
    if (auto error = fleet_error(report)) return reply->returnError(*error);
    std::vector<sdbus::Struct<std::string, uint32_t, uint64_t, uint64_t, uint64_t, uint64_t, bool,
                              std::string>>
        backends;
    for (const auto& b : report.backends)
      backends.emplace_back(bus_string(b.backend), b.max_concurrent, b.counted, b.ignored, b.unread,
                            b.unlisted, b.names_unread, bus_string(b.error));
    std::vector<sdbus::Struct<std::string, uint32_t, uint32_t, std::string, std::string, bool, bool,
                              std::string>>
        claims;
    for (const auto& row : report.rows)
      claims.emplace_back(bus_string(row.backend), row.max_concurrent, row.position,
                          bus_string(row.host), bus_string(row.mount_point), row.holds, row.ours,
                          claim_note(row.fault));
    reply->returnResults(backends, claims);
  });
}

}  // namespace trimd::bus
