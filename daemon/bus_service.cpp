// The bus service: the connection, the objects, and the manager listener
// that keeps them in step with the engine.
#include "bus_service.hpp"

#include <sdbus-c++/Error.h>
#include <spdlog/spdlog.h>

#include <map>
#include <memory>

#include "bus_auth.hpp"
#include "bus_commands.hpp"
#include "bus_connection.hpp"
#include "bus_filesystem_object.hpp"
#include "bus_manager_object.hpp"
#include "bus_mount_points.hpp"
#include "bus_names.hpp"
#include "daemon.hpp"

namespace trimd {

namespace {

class DbusService final : public BusService, public ManagerListener {
 public:
  DbusService(EventLoop& loop, Manager& manager, DaemonControl& control, const Options& options);
  ~DbusService() override;

  void filesystem_added(const FsStatus& status) override;
  void filesystem_removed(const std::string& id) override;
  void filesystem_changed(const FsStatus& status) override;
  void trim_started(const std::string& id) override;
  void trim_finished(const std::string& id, const PassOutcome& outcome, std::uint64_t bytes,
                     Duration elapsed) override;
  void manager_changed() override;
  bus::BusConnection& connection() override { return connection_; }

 private:
  void add_object(const FsStatus& status, bool announce);
  // Listener calls come from inside the manager: a bus failure must not
  // unwind through it. Messages are flushed on the loop's next turn.
  template <typename F>
  void guarded(const char* what, F&& emit);

  EventLoop& loop_;
  Manager& manager_;
  bus::BusConnection connection_;
  bus::Authorizer authorizer_;
  bus::Commands commands_;
  bus::ManagerObject manager_object_;
  std::map<std::string, std::unique_ptr<bus::FilesystemObject>> filesystems_;
};

DbusService::DbusService(EventLoop& loop, Manager& manager, DaemonControl& control,
                         const Options& options)
    : loop_(loop), manager_(manager), connection_(loop, options.bus_address),
      authorizer_(connection_.get()),
      commands_(manager, control, authorizer_, bus::inspect_live_path),
      manager_object_(connection_.get(), commands_, loop) {
  for (const auto& status : manager_.statuses(control.now())) add_object(status, false);
  // Objects first, name last: whoever sees the name finds everything there.
  using NameRequest = bus::BusConnection::NameRequest;
  const NameRequest reply = connection_.request_name(bus::kBusName);
  // Another trimd owns the name: two daemons would trim the same disks.
  if (reply == NameRequest::Exists || reply == NameRequest::InQueue)
    throw BusNameTaken(std::string(bus::kBusName) + " is already owned on the bus; is another " +
                       "trimd running? Refusing to trim the same disks twice");
  manager_.add_listener(this);
  spdlog::info("serving {} on the bus as {}", bus::kBusName, connection_.get().getUniqueName());
}

DbusService::~DbusService() { manager_.remove_listener(this); }

template <typename F>
void DbusService::guarded(const char* what, F&& emit) {
  if (!connection_.connected()) return;
  try {
    emit();
  } catch (const std::exception& e) {
    spdlog::warn("D-Bus: cannot announce {}: {}", what, e.what());
  }
  connection_.dispatch_soon();
}

void DbusService::add_object(const FsStatus& status, bool announce) {
  filesystems_[status.id] =
      std::make_unique<bus::FilesystemObject>(connection_, loop_, commands_, status, announce);
}

void DbusService::filesystem_added(const FsStatus& status) {
  guarded("a new filesystem", [&] {
    filesystems_.erase(status.id);
    add_object(status, true);
  });
}

void DbusService::filesystem_removed(const std::string& id) {
  auto it = filesystems_.find(id);
  if (it == filesystems_.end()) return;
  guarded("a removed filesystem", [&] { it->second->announce_removal(); });
  filesystems_.erase(it);
}

void DbusService::filesystem_changed(const FsStatus& status) {
  auto it = filesystems_.find(status.id);
  if (it == filesystems_.end()) return;
  guarded("a filesystem change", [&] { it->second->update(status); });
}

void DbusService::trim_started(const std::string& id) {
  guarded("TrimStarted", [&] { manager_object_.emitTrimStarted(bus::filesystem_object_path(id)); });
}

void DbusService::trim_finished(const std::string& id, const PassOutcome& outcome,
                                std::uint64_t bytes, Duration elapsed) {
  guarded("TrimFinished", [&] {
    const auto usec = static_cast<std::uint64_t>(std::max<Duration::rep>(elapsed.count(), 0));
    manager_object_.emitTrimFinished(bus::filesystem_object_path(id),
                                     bus::bus_string(outcome.text()), bytes, usec);
  });
}

void DbusService::manager_changed() {
  guarded("a manager change", [&] { manager_object_.announce_changes(); });
}

}  // namespace

std::unique_ptr<BusService> make_bus_service(EventLoop& loop, Manager& manager,
                                             DaemonControl& control, const Options& options) {
  const std::string where = options.bus_address.value_or("the system bus");
  try {
    return std::make_unique<DbusService>(loop, manager, control, options);
  } catch (const BusNameTaken&) {
    throw;
  } catch (const std::exception& e) {
    spdlog::warn("cannot serve {} on {}: {}; trimming goes on without the D-Bus API", bus::kBusName,
                 where, e.what());
    return nullptr;
  }
}

}  // namespace trimd
