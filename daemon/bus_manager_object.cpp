#include "bus_manager_object.hpp"

#include "build_config.hpp"
#include "bus_names.hpp"
#include "daemon.hpp"

namespace trimd::bus {

ManagerObject::ManagerObject(sdbus::IConnection& connection, Commands& commands)
    : ManagerAdaptor(connection, kManagerPath), commands_(commands),
      announced_state_(commands.manager().state()),
      announced_total_(commands.manager().bytes_trimmed_total()) {
  registerAdaptor();
}

ManagerObject::~ManagerObject() { unregisterAdaptor(); }

void ManagerObject::announce_changes() {
  std::vector<std::string> names;
  const Manager& manager = commands_.manager();
  if (manager.state() != announced_state_) {
    announced_state_ = manager.state();
    names.emplace_back("State");
  }
  if (manager.bytes_trimmed_total() != announced_total_) {
    announced_total_ = manager.bytes_trimmed_total();
    names.emplace_back("BytesTrimmedTotal");
  }
  if (!names.empty()) emitPropertiesChangedSignal(kManagerInterface, names);
}

const sdbus::Message* ManagerObject::current_call() const {
  return getObject().getCurrentlyProcessedMessage();
}

void ManagerObject::TrimNow(sdbus::Result<>&& result, std::vector<std::string> mount_points,
                            bool ignore_idle) {
  commands_.run_on_mount_points(
      std::move(result), current_call(), "Manager.TrimNow", std::move(mount_points),
      [ignore_idle](Manager& m, const auto& ids, TimePoint now) {
        m.trim_now(ids, ignore_idle, now);
      });
}

void ManagerObject::Pause(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(std::move(result), current_call(), "Manager.Pause",
                                std::move(mount_points),
                                [](Manager& m, const auto& ids, TimePoint now) { m.pause(ids, now); });
}

void ManagerObject::Resume(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(std::move(result), current_call(), "Manager.Resume",
                                std::move(mount_points),
                                [](Manager& m, const auto& ids, TimePoint now) { m.resume(ids, now); });
}

void ManagerObject::Cancel(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(std::move(result), current_call(), "Manager.Cancel",
                                std::move(mount_points),
                                [](Manager& m, const auto& ids, TimePoint now) { m.cancel(ids, now); });
}

void ManagerObject::Reload(sdbus::Result<>&& result) {
  commands_.run(std::move(result), current_call(), "Manager.Reload", [this]() -> Commands::Action {
    return [this] { commands_.control().reload(); };
  });
}

void ManagerObject::NotifyFreed(sdbus::Result<>&& result, std::string mount_point,
                                uint64_t bytes) {
  commands_.run_on_mount_points(std::move(result), current_call(), "Manager.NotifyFreed",
                                {std::move(mount_point)},
                                [bytes](Manager& m, const auto& ids, TimePoint now) {
                                  m.notify_freed(ids.front(), bytes, now);
                                });
}

void ManagerObject::TakeOver(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(std::move(result), current_call(), "Manager.TakeOver", mount_points,
                                [this](Manager&, const auto& ids, TimePoint) {
                                  commands_.control().take_over(ids);
                                });
}

void ManagerObject::HandBack(sdbus::Result<>&& result, std::vector<std::string> mount_points) {
  commands_.run_on_mount_points(std::move(result), current_call(), "Manager.HandBack", mount_points,
                                [this](Manager&, const auto& ids, TimePoint) {
                                  commands_.control().hand_back(ids);
                                });
}

std::string ManagerObject::Version() { return TRIMD_VERSION; }
std::string ManagerObject::State() { return commands_.manager().state(); }
uint64_t ManagerObject::BytesTrimmedTotal() { return commands_.manager().bytes_trimmed_total(); }

}  // namespace trimd::bus
