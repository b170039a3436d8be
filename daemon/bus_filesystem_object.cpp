#include "bus_filesystem_object.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "bus_names.hpp"

namespace trimd::bus {

namespace {

constexpr auto kProgressInterval = std::chrono::milliseconds{250};

}  // namespace

FilesystemObject::FilesystemObject(BusConnection& bus, EventLoop& loop, Commands& commands,
                                   FsStatus status, bool announce)
    : FilesystemAdaptor(bus.get(), filesystem_object_path(status.id)), bus_(bus),
      commands_(commands), status_(std::move(status)), progress_throttle_(kProgressInterval),
      progress_timer_(loop, [this] { flush_progress(); }) {
  registerAdaptor();
  if (announce) emitInterfacesAddedSignal();
}

FilesystemObject::~FilesystemObject() { unregisterAdaptor(); }

void FilesystemObject::announce_removal() { emitInterfacesRemovedSignal(); }

void FilesystemObject::update(const FsStatus& status) {
  std::vector<std::string> names = changed_properties(status_, status);
  std::erase_if(names, [](const std::string& name) { return !signals_changes(name); });
  status_ = status;
  auto progress = std::find(names.begin(), names.end(), "Progress");
  if (progress != names.end() && !progress_throttle_.try_send(Throttle::Clock::now())) {
    names.erase(progress);
    progress_pending_ = true;
    progress_timer_.arm_in(
        std::chrono::duration_cast<Duration>(progress_throttle_.wait(Throttle::Clock::now())));
  } else if (progress != names.end()) {
    progress_pending_ = false;
  }
  if (!names.empty()) emitPropertiesChangedSignal(kFilesystemInterface, names);
}

void FilesystemObject::flush_progress() {
  if (!progress_pending_) return;
  try {
    progress_pending_ = false;
    progress_throttle_.try_send(Throttle::Clock::now());
    emitPropertiesChangedSignal(kFilesystemInterface, {"Progress"});
    bus_.dispatch_soon();
  } catch (const sdbus::Error& e) {
    spdlog::debug("cannot announce progress of {}: {}", status_.mount_point, e.what());
  }
}

void FilesystemObject::control(sdbus::Result<>&& result, const std::string& method,
                               Commands::Work work) {
  // By id, not through this object: polkit may answer after it went away.
  commands_.run_on_ids(std::move(result), getObject().getCurrentlyProcessedMessage(),
                       "Filesystem." + method, {status_.id}, std::move(work));
}

void FilesystemObject::Trim(sdbus::Result<>&& result, bool ignore_idle) {
  control(std::move(result), "Trim", [ignore_idle](Manager& m, const auto& ids, TimePoint now) {
    m.trim_now(ids, ignore_idle, now);
  });
}

void FilesystemObject::Pause(sdbus::Result<>&& result) {
  control(std::move(result), "Pause",
          [](Manager& m, const auto& ids, TimePoint now) { m.pause(ids, now); });
}

void FilesystemObject::Resume(sdbus::Result<>&& result) {
  control(std::move(result), "Resume",
          [](Manager& m, const auto& ids, TimePoint now) { m.resume(ids, now); });
}

void FilesystemObject::Cancel(sdbus::Result<>&& result) {
  control(std::move(result), "Cancel",
          [](Manager& m, const auto& ids, TimePoint now) { m.cancel(ids, now); });
}

}  // namespace trimd::bus
