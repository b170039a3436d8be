#include "fake_trimd.hpp"

#include <sdbus-c++/sdbus-c++.h>
#include <algorithm>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <type_traits>

#include "trimd1_adaptor.h"

namespace trimctl_test {

namespace {

constexpr const char* kBusName = "org.trimd.trimd1";
constexpr const char* kManagerPath = "/org/trimd/trimd1";
constexpr const char* kManagerInterface = "org.trimd.trimd1.Manager";
constexpr const char* kFilesystemInterface = "org.trimd.trimd1.Filesystem";
constexpr auto kStepDelay = std::chrono::milliseconds(40);

uint64_t now_usec() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<microseconds>(system_clock::now().time_since_epoch()).count());
}

// What the bus objects answer from and forward to.
class Backend {
 public:
  virtual void trim_now(const std::vector<std::string>& mount_points, bool ignore_idle) = 0;
  virtual void pause(const std::vector<std::string>& mount_points) = 0;
  virtual void resume(const std::vector<std::string>& mount_points) = 0;
  virtual void cancel(const std::vector<std::string>& mount_points) = 0;
  virtual void reload() = 0;
  virtual void notify_freed(const std::string& mount_point, uint64_t bytes) = 0;
  virtual void take_over(const std::vector<std::string>& mount_points) = 0;
  virtual void hand_back(const std::vector<std::string>& mount_points) = 0;
  virtual FakeFilesystem filesystem(const std::string& path) const = 0;
  virtual trimctl::ManagerInfo manager_info() const = 0;
  virtual std::vector<FakeFilesystem> all() const = 0;
  // Nothing: no [fleet] (GetFleet answers NotSupported).
  virtual std::optional<trimctl::FleetView> fleet() const = 0;

 protected:
  ~Backend() = default;
};

// The value of the property `name` of `info` (a ManagerInfo or a
// FilesystemInfo), for the getters generated from the XML
// (daemon/dbus/getters.cmake): the fake serves what trimctl reads back.
template <typename T, typename Info>
T property_of(const Info& info, std::string_view name) {
  T found{};
  trimctl::visit_properties(info, [&](std::string_view property, const char*, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, T>)
      if (property == name) found = value;
  });
  return found;
}

// Does the work of a call, then replies: success, or the error it threw.
template <typename Work>
void answer(sdbus::Result<>&& result, Work&& work) {
  try {
    work();
    result.returnResults();
  } catch (const sdbus::Error& error) {
    result.returnError(error);
  }
}

class ManagerObject final
    : public sdbus::AdaptorInterfaces<org::trimd::trimd1::Manager_adaptor,
                                      sdbus::ObjectManager_adaptor, sdbus::Properties_adaptor> {
 public:
  ManagerObject(sdbus::IConnection& connection, Backend& backend)
      : AdaptorInterfaces(connection, kManagerPath), backend_(backend) {
    registerAdaptor();
  }
  ~ManagerObject() { unregisterAdaptor(); }

 private:
  // The API's methods answer asynchronously (Method.Async="server"); the
  // fake answers at once, after whatever the call set off.
  void TrimNow(sdbus::Result<>&& result, std::vector<std::string> mounts,
               bool ignore_idle) override {
    answer(std::move(result), [&] { backend_.trim_now(mounts, ignore_idle); });
  }
  void Pause(sdbus::Result<>&& result, std::vector<std::string> mounts) override {
    answer(std::move(result), [&] { backend_.pause(mounts); });
  }
  void Resume(sdbus::Result<>&& result, std::vector<std::string> mounts) override {
    answer(std::move(result), [&] { backend_.resume(mounts); });
  }
  void Cancel(sdbus::Result<>&& result, std::vector<std::string> mounts) override {
    answer(std::move(result), [&] { backend_.cancel(mounts); });
  }
  void Reload(sdbus::Result<>&& result) override {
    answer(std::move(result), [&] { backend_.reload(); });
  }
  void NotifyFreed(sdbus::Result<>&& result, std::string mount, uint64_t bytes) override {
    answer(std::move(result), [&] { backend_.notify_freed(mount, bytes); });
  }
  void TakeOver(sdbus::Result<>&& result, std::vector<std::string> mounts) override {
    answer(std::move(result), [&] { backend_.take_over(mounts); });
  }
  void HandBack(sdbus::Result<>&& result, std::vector<std::string> mounts) override {
    answer(std::move(result), [&] { backend_.hand_back(mounts); });
  }
  template <typename T>
  T property_value(std::string_view name) {
    return property_of<T>(backend_.manager_info(), name);
  }
#include "manager_getters.inc"
  std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                            std::string, uint32_t>>
  GetHistory(const std::string& mount_point) override {
    std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                              std::string, uint32_t>>
        out;
    bool found = mount_point.empty();
    for (const auto& fs : backend_.all()) {
      if (!mount_point.empty() && fs.mount_point != mount_point) continue;
      found = true;
      for (const auto& p : fs.history)
        out.emplace_back(fs.mount_point, p.start, p.end, p.trim_usec, p.wait_usec, p.bytes,
                         p.result, p.preemptions);
    }
    if (!found)
      throw sdbus::Error("org.trimd.trimd1.Error.NotFound",
                         "no filesystem remembered at " + mount_point);
    return out;
  }

  void GetFleet(
      sdbus::Result<std::vector<sdbus::Struct<std::string, uint32_t, uint32_t, std::string,
                                              std::string, bool, bool>>>&& result) override {
    const auto view = backend_.fleet();
    if (!view) return result.returnError(no_fleet());
    std::vector<
        sdbus::Struct<std::string, uint32_t, uint32_t, std::string, std::string, bool, bool>>
        out;
    for (const auto& c : view->claims)
      if (c.position > 0)
        out.emplace_back(c.backend, c.max_concurrent, c.position, c.host, c.mount_point, c.holds,
                         c.ours);
    result.returnResults(out);
  }

  void GetFleetView(
      sdbus::Result<std::vector<sdbus::Struct<std::string, uint32_t, uint64_t, uint64_t, uint64_t,
                                              uint64_t, bool, std::string>>,
                    std::vector<sdbus::Struct<std::string, uint32_t, uint32_t, std::string,
                                              std::string, bool, bool, std::string>>>&& result)
      override {
    const auto view = backend_.fleet();
    if (!view) return result.returnError(no_fleet());
    std::vector<sdbus::Struct<std::string, uint32_t, uint64_t, uint64_t, uint64_t, uint64_t, bool,
                              std::string>>
        backends;
    for (const auto& b : view->backends)
      backends.emplace_back(b.backend, b.max_concurrent, b.counted, b.ignored, b.unread, b.unlisted,
                            b.names_unread, b.error);
    std::vector<sdbus::Struct<std::string, uint32_t, uint32_t, std::string, std::string, bool, bool,
                              std::string>>
        claims;
    for (const auto& c : view->claims)
      claims.emplace_back(c.backend, c.max_concurrent, c.position, c.host, c.mount_point, c.holds,
                          c.ours, c.note);
    result.returnResults(backends, claims);
  }

  static sdbus::Error no_fleet() {
    return sdbus::Error("org.trimd.trimd1.Error.NotSupported",
                        "no [fleet] in the policy: passes are not coordinated");
  }

  Backend& backend_;
};

class FilesystemObject final
    : public sdbus::AdaptorInterfaces<org::trimd::trimd1::Filesystem_adaptor,
                                      sdbus::ManagedObject_adaptor, sdbus::Properties_adaptor> {
 public:
  FilesystemObject(sdbus::IConnection& connection, const std::string& path, Backend& backend)
      : AdaptorInterfaces(connection, path), path_(path), backend_(backend) {
    registerAdaptor();
  }
  ~FilesystemObject() { unregisterAdaptor(); }

 private:
  FakeFilesystem fs() const { return backend_.filesystem(path_); }

  void Trim(sdbus::Result<>&& result, bool ignore_idle) override {
    answer(std::move(result), [&] { backend_.trim_now({fs().mount_point}, ignore_idle); });
  }
  void Pause(sdbus::Result<>&& result) override {
    answer(std::move(result), [&] { backend_.pause({fs().mount_point}); });
  }
  void Resume(sdbus::Result<>&& result) override {
    answer(std::move(result), [&] { backend_.resume({fs().mount_point}); });
  }
  void Cancel(sdbus::Result<>&& result) override {
    answer(std::move(result), [&] { backend_.cancel({fs().mount_point}); });
  }
  template <typename T>
  T property_value(std::string_view name) {
    return property_of<T>(fs(), name);
  }
#include "filesystem_getters.inc"

  std::string path_;
  Backend& backend_;
};

std::string object_path(const FakeFilesystem& fs) {
  return std::string(kManagerPath) + "/filesystem/" + fs.id;
}

}  // namespace

struct FakeTrimd::Impl final : Backend {
  Pacing pacing;
  mutable std::mutex mutex;  // guards the data below; never held while calling sdbus
  std::map<std::string, FakeFilesystem> filesystems;  // by object path
  std::string state = "idle";
  uint64_t total = 0;
  FakeCalls calls;
  std::optional<std::pair<std::string, std::string>> reload_error;
  std::optional<trimctl::FleetView> fleet_view;
  mutable std::atomic<uint64_t> reads{0};

  std::unique_ptr<sdbus::IConnection> connection;
  std::unique_ptr<ManagerObject> manager;
  std::map<std::string, std::unique_ptr<FilesystemObject>> objects;
  std::vector<std::thread> passes;

  explicit Impl(Pacing p) : pacing(p) {}

  // Object paths of the mount points (all trimmable ones for none).
  std::vector<std::string> resolve(const std::vector<std::string>& mount_points) const {
    std::vector<std::string> paths;
    for (const auto& [path, fs] : filesystems)
      if (mount_points.empty() && fs.state != "unsupported" && fs.state != "disabled")
        paths.push_back(path);
    for (const auto& mount_point : mount_points) {
      auto it = filesystems.begin();
      while (it != filesystems.end() && it->second.mount_point != mount_point) ++it;
      if (it == filesystems.end())
        throw sdbus::Error("org.trimd.trimd1.Error.NotFound",
                           mount_point + " is not a filesystem trimd tracks");
      paths.push_back(it->first);
    }
    return paths;
  }

  template <typename Change>
  FakeFilesystem change(const std::string& path, Change&& apply) {
    std::lock_guard lock(mutex);
    apply(filesystems.at(path));
    return filesystems.at(path);
  }

  void announce(const std::string& path, const std::vector<std::string>& properties) {
    FilesystemObject* object;
    {
      std::lock_guard lock(mutex);
      object = objects.at(path).get();
    }
    object->emitPropertiesChangedSignal(kFilesystemInterface, properties);
  }

  void set_manager_state(const std::string& new_state) {
    {
      std::lock_guard lock(mutex);
      state = new_state;
    }
    manager->emitPropertiesChangedSignal(kManagerInterface, {"State", "BytesTrimmedTotal"});
  }

  void start_pass(const std::string& path) {
    change(path, [](FakeFilesystem& fs) {
      fs.state = "trimming";
      fs.progress = 0;
      fs.next_trim = 0;
    });
    set_manager_state("trimming");
    manager->emitTrimStarted(path);
    announce(path, {"State", "Progress", "NextTrim"});
  }

  void advance_pass(const std::string& path, double progress) {
    change(path, [&](FakeFilesystem& fs) { fs.progress = progress; });
    announce(path, {"Progress"});
  }

  void finish_pass(const std::string& path) {
    const uint64_t now = now_usec();
    const FakeFilesystem fs = change(path, [&](FakeFilesystem& f) {
      f.state = "scheduled";
      f.last_trim_start = now - f.next_usec;
      f.last_trim_end = now;
      f.last_result = f.next_result;
      f.last_bytes_trimmed = f.next_bytes;
      f.last_wait_duration = f.next_wait_usec;
      f.last_trim_duration = f.next_usec - f.next_wait_usec;
      f.bytes_trimmed_total += f.next_bytes;
      ++f.passes_total;
      f.next_trim = now + 7ull * 24 * 3600 * 1000000;
    });
    {
      std::lock_guard lock(mutex);
      total += fs.next_bytes;
    }
    announce(path,
             {"State", "LastTrimStart", "LastTrimEnd", "LastResult", "LastBytesTrimmed", "NextTrim",
              "LastTrimDuration", "LastWaitDuration", "BytesTrimmedTotal", "PassesTotal"});
    set_manager_state("idle");
    manager->emitTrimFinished(path, fs.next_result, fs.next_bytes, fs.next_usec);
  }

  // The scripted pass, step by step over all the filesystems together.
  void run_passes(const std::vector<std::string>& paths) {
    const auto step = [this] {
      if (pacing != Pacing::Immediate) std::this_thread::sleep_for(kStepDelay);
    };
    for (const auto& path : paths) start_pass(path);
    step();
    if (pacing == Pacing::Percent)
      for (int percent = 1; percent < 50; ++percent)
        for (const auto& path : paths) advance_pass(path, percent / 100.0);
    for (const auto& path : paths) advance_pass(path, 0.5);
    if (pacing == Pacing::Percent)
      for (int percent = 51; percent < 100; ++percent)
        for (const auto& path : paths) advance_pass(path, percent / 100.0);
    if (pacing == Pacing::Stalled) return;
    step();
    for (const auto& path : paths)
      if (filesystem(path).next_result == "success") advance_pass(path, 1.0);
    step();
    for (const auto& path : paths) finish_pass(path);
  }

  void trim_now(const std::vector<std::string>& mount_points, bool ignore_idle) override {
    std::vector<std::string> paths;
    {
      std::lock_guard lock(mutex);
      calls.trim_now.push_back(mount_points);
      calls.trim_now_ignore_idle.push_back(ignore_idle);
      paths = resolve(mount_points);
    }
    if (pacing == Pacing::Immediate || pacing == Pacing::Percent)
      run_passes(paths);  // every signal goes out before the reply
    else
      passes.emplace_back([this, paths] { run_passes(paths); });
  }

  void record(std::vector<std::vector<std::string>>& into, const std::vector<std::string>& mounts) {
    std::lock_guard lock(mutex);
    into.push_back(mounts);
    resolve(mounts);
  }
  void pause(const std::vector<std::string>& mounts) override { record(calls.pause, mounts); }
  void resume(const std::vector<std::string>& mounts) override { record(calls.resume, mounts); }
  void cancel(const std::vector<std::string>& mounts) override { record(calls.cancel, mounts); }
  void take_over(const std::vector<std::string>& mounts) override {
    record(calls.take_over, mounts);
  }
  void hand_back(const std::vector<std::string>& mounts) override {
    record(calls.hand_back, mounts);
  }

  void reload() override {
    std::lock_guard lock(mutex);
    ++calls.reloads;
    if (reload_error) throw sdbus::Error(reload_error->first, reload_error->second);
  }

  void notify_freed(const std::string& mount_point, uint64_t bytes) override {
    std::lock_guard lock(mutex);
    calls.notify_freed.emplace_back(mount_point, bytes);
    resolve({mount_point});
  }

  FakeFilesystem filesystem(const std::string& path) const override {
    std::lock_guard lock(mutex);
    ++reads;
    return filesystems.at(path);
  }
  // Its totals are the filesystems' but for the bytes: those of the passes
  // it played.
  trimctl::ManagerInfo manager_info() const override {
    std::lock_guard lock(mutex);
    trimctl::ManagerInfo info;
    info.version = "0.1.0";
    info.state = state;
    info.bytes_trimmed_total = total;
    for (const auto& [path, fs] : filesystems) {
      info.passes_total += fs.passes_total;
      info.preemptions_total += fs.preemptions_total;
      info.pauses_total += fs.pauses_total;
      info.failures_total += fs.failures_total;
    }
    return info;
  }
  std::vector<FakeFilesystem> all() const override {
    std::lock_guard lock(mutex);
    std::vector<FakeFilesystem> out;
    for (const auto& [path, fs] : filesystems) out.push_back(fs);
    return out;
  }

  std::optional<trimctl::FleetView> fleet() const override {
    std::lock_guard lock(mutex);
    return fleet_view;
  }

  FilesystemObject& export_filesystem(const FakeFilesystem& fs) {
    const std::string path = object_path(fs);
    {
      std::lock_guard lock(mutex);
      filesystems[path] = fs;
    }
    auto object = std::make_unique<FilesystemObject>(*connection, path, *this);
    std::lock_guard lock(mutex);
    return *(objects[path] = std::move(object));
  }

  std::string path_of(const std::string& mount_point) const {
    std::lock_guard lock(mutex);
    return resolve({mount_point}).front();
  }
};

FakeTrimd::FakeTrimd(const std::string& address, std::vector<FakeFilesystem> filesystems,
                     Pacing pacing)
    : impl_(std::make_unique<Impl>(pacing)) {
  impl_->connection = sdbus::createSessionBusConnectionWithAddress(address);
  impl_->manager = std::make_unique<ManagerObject>(*impl_->connection, *impl_);
  for (const auto& fs : filesystems) impl_->export_filesystem(fs);
  // The name last: whoever sees it finds every object in place.
  impl_->connection->requestName(kBusName);
  impl_->connection->enterEventLoopAsync();
}

FakeTrimd::~FakeTrimd() {
  // No new calls (and so no new pass threads) once the loop has stopped.
  impl_->connection->leaveEventLoop();
  for (auto& pass : impl_->passes) pass.join();
  impl_->objects.clear();
  impl_->manager.reset();
}

FakeCalls FakeTrimd::calls() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->calls;
}

uint64_t FakeTrimd::property_reads() const { return impl_->reads.load(); }

void FakeTrimd::set_fleet(std::vector<trimctl::FleetClaim> claims) {
  trimctl::FleetView view;
  for (const auto& claim : claims) {
    auto it = std::find_if(view.backends.begin(), view.backends.end(),
                           [&](const auto& b) { return b.backend == claim.backend; });
    if (it == view.backends.end())
      it = view.backends.insert(
          view.backends.end(),
          trimctl::FleetBackend{claim.backend, claim.max_concurrent, 0, 0, 0, 0, false, ""});
    if (claim.position == 0)
      ++it->ignored;
    else
      it->counted = std::max<uint64_t>(it->counted, claim.position);  // a place implies those ahead
  }
  for (auto& backend : view.backends) {
    const auto listed = std::count_if(claims.begin(), claims.end(), [&](const auto& c) {
      return c.backend == backend.backend && c.position > 0;
    });
    backend.unlisted = backend.counted - static_cast<uint64_t>(listed);
  }
  view.claims = std::move(claims);
  set_fleet(std::move(view));
}

void FakeTrimd::set_fleet(trimctl::FleetView view) {
  std::lock_guard lock(impl_->mutex);
  impl_->fleet_view = std::move(view);
}

void FakeTrimd::fail_reload_with(const std::string& error_name, const std::string& message) {
  std::lock_guard lock(impl_->mutex);
  impl_->reload_error.emplace(error_name, message);
}

void FakeTrimd::set_progress(const std::string& mount_point, double progress) {
  impl_->advance_pass(impl_->path_of(mount_point), progress);
}

void FakeTrimd::add_filesystem(const FakeFilesystem& filesystem) {
  impl_->export_filesystem(filesystem).emitInterfacesAddedSignal({kFilesystemInterface});
}

void FakeTrimd::remove_filesystem(const std::string& mount_point) {
  const std::string path = impl_->path_of(mount_point);
  std::unique_ptr<FilesystemObject> object;
  {
    std::lock_guard lock(impl_->mutex);
    object = std::move(impl_->objects.at(path));
    impl_->objects.erase(path);
    impl_->filesystems.erase(path);
  }
  object->emitInterfacesRemovedSignal({kFilesystemInterface});
}

}  // namespace trimctl_test
