// trimctl's only way to trimd: the org.trimd.trimd1 API through the proxies
// generated from daemon/dbus/org.trimd.trimd1.xml. Nothing here leaks
// sdbus-c++ types, so the commands and their formatting stay bus-free.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "trimd1_properties.hpp"

namespace trimctl {

// The types the API's properties have (b, t, d, s, as).
using PropertyValue = std::variant<bool, uint64_t, double, std::string, std::vector<std::string>>;
using PropertyMap = std::map<std::string, PropertyValue>;

// trimd's objects as trimctl reads them: one member per property of the
// introspection XML, generated from it (ctl/CMakeLists.txt), so a property
// added there is read, printed by --json and served by the fake trimd
// without a line here. Timestamps in usec, 0 = never.
using ManagerInfo = ManagerProperties;

// Lifetime figures, across trimd's restarts.
struct LifetimeInfo {
  uint64_t bytes_trimmed_total = 0;
  uint64_t passes_total = 0;
  uint64_t preemptions_total = 0;
  uint64_t pauses_total = 0;
  uint64_t failures_total = 0;
};

// The lifetime figures of a ManagerInfo or a FilesystemInfo.
template <typename Info>
LifetimeInfo lifetime_of(const Info& info) {
  return {info.bytes_trimmed_total, info.passes_total, info.preemptions_total, info.pauses_total,
          info.failures_total};
}

// One remembered pass (Manager.GetHistory); times and durations in usec.
struct PassInfo {
  std::string mount_point;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t trim_usec = 0;
  uint64_t wait_usec = 0;
  uint64_t bytes = 0;
  std::string result;
  uint32_t preemptions = 0;
};

// One claim on a shared backend's slots (GetFleetView): position 0 and a
// note for a key that does not count; a note for one whose names are unknown.
struct FleetClaim {
  std::string backend;
  uint32_t max_concurrent = 0;
  uint32_t position = 0;
  std::string host;
  std::string mount_point;
  bool holds = false;
  bool ours = false;
  std::string note;
};

// One backend's summary: what the rows leave out.
struct FleetBackend {
  std::string backend;
  uint32_t max_concurrent = 0;
  uint64_t counted = 0;   // claims that count, among those trimd read
  uint64_t ignored = 0;   // keys that do not
  uint64_t unread = 0;    // keys past the read's bound
  uint64_t unlisted = 0;  // claims read but not in the rows
  bool names_unread = false;
  std::string error;
};

struct FleetView {
  std::vector<FleetBackend> backends;
  std::vector<FleetClaim> claims;
};

// One org.trimd.trimd1.Filesystem object.
struct FilesystemInfo : FilesystemProperties {
  std::string object_path;
};

// Calls visit(bus name, --json member name, member) for every property of a
// ManagerInfo or a FilesystemInfo (const or not), in the XML's order.
template <typename Info, typename Visit>
void visit_properties(Info& info, Visit&& visit) {
  if constexpr (std::is_base_of_v<FilesystemProperties, std::remove_const_t<Info>>)
    visit_filesystem_properties(info, visit);
  else
    visit_manager_properties(info, visit);
}

// Copies the properties it knows into the struct; others are ignored, so
// a newer trimd with more properties still works.
void apply_properties(ManagerInfo& manager, const PropertyMap& properties);
void apply_properties(FilesystemInfo& filesystem, const PropertyMap& properties);
// The property names those read (tests hold them to the introspection XML).
std::vector<std::string> manager_properties_read();
std::vector<std::string> filesystem_properties_read();

// trimd (or the bus) answered a call with a D-Bus error.
class BusError : public std::runtime_error {
 public:
  BusError(std::string name, const std::string& message)
      : std::runtime_error(message), name_(std::move(name)) {}
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// No bus, nobody owning org.trimd.trimd1, or the connection was lost.
class Unreachable : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What trimd announces, delivered from Client::dispatch_until().
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_trim_started(const std::string& /*object*/) {}
  virtual void on_trim_finished(const std::string& /*object*/, const std::string& /*result*/,
                                uint64_t /*bytes*/, uint64_t /*usec*/) {}
  // `object` is the manager's path or a filesystem's; `interface` says which.
  virtual void on_properties_changed(const std::string& /*object*/,
                                     const std::string& /*interface*/,
                                     const PropertyMap& /*changed*/) {}
  virtual void on_filesystem_added(const FilesystemInfo& /*filesystem*/) {}
  virtual void on_filesystem_removed(const std::string& /*object*/) {}
  // trimd left the bus (false) or came (back) onto it (true).
  virtual void on_daemon_presence(bool /*present*/) {}
};

inline constexpr const char* kManagerPath = "/org/trimd/trimd1";
inline constexpr const char* kManagerInterface = "org.trimd.trimd1.Manager";
inline constexpr const char* kFilesystemInterface = "org.trimd.trimd1.Filesystem";

// Every call throws BusError or Unreachable when it fails.
class Client {
 public:
  // Connects to the bus at `address`, or to the system bus when empty.
  explicit Client(const std::string& address);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // A person may be typing a password for polkit meanwhile: calls wait
  // as long as trimd waits for polkit, not sd-bus's default 25 s.
  void allow_time_to_authenticate();

  ManagerInfo manager();
  // Sorted by mount point.
  std::vector<FilesystemInfo> filesystems();

  void trim_now(const std::vector<std::string>& mount_points, bool ignore_idle);
  void pause(const std::vector<std::string>& mount_points);
  void resume(const std::vector<std::string>& mount_points);
  void cancel(const std::vector<std::string>& mount_points);
  void reload();
  void notify_freed(const std::string& mount_point, uint64_t bytes);
  void take_over(const std::vector<std::string>& mount_points);
  void hand_back(const std::vector<std::string>& mount_points);
  // Oldest first; every remembered filesystem's for an empty mount point.
  std::vector<PassInfo> history(const std::string& mount_point);
  FleetView fleet();

  // From now on, trimd's signals and property changes go to `sink`; the
  // bus has the match rules when this returns, so nothing sent after it
  // is missed. Also holds back SIGINT/SIGTERM for dispatch_until().
  void subscribe(EventSink& sink);

  // Handles bus messages until done() holds (returns true) or SIGINT or
  // SIGTERM arrives (returns false).
  bool dispatch_until(const std::function<bool()>& done);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trimctl
