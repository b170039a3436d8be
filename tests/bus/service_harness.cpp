#include "service_harness.hpp"

#include <sys/epoll.h>

#include "bus_names.hpp"

namespace trimd::test {

const char* const ServiceHarness::kIdA = "uuid-1111-aaaa";
const char* const ServiceHarness::kMountA = "/srv/trimd-test-a";
const char* const ServiceHarness::kIdB = "dev-/dev/fakeb-/srv/trimd test b";
const char* const ServiceHarness::kMountB = "/srv/trimd test b";

DiscoveredFs fake_filesystem(const std::string& id, const std::string& mount_point,
                             const std::string& disk, std::uint64_t size) {
  DiscoveredFs fs;
  fs.id = id;
  fs.mount.mount_point = mount_point;
  fs.mount.fs_type = "ext4";
  fs.mount.source = "/dev/" + disk;
  fs.uuid = id.rfind("uuid-", 0) == 0 ? id.substr(5) : "";
  BlockDisk block;
  block.name = disk;
  block.size_bytes = size;
  block.discard_max_bytes = 1ull << 30;
  block.discard_granularity = 4096;
  fs.topology.devices = {block};
  fs.topology.disks = {block};
  fs.geometry = FsGeometry{"ext4", size, 0};
  return fs;
}

void FakeControl::reload() {
  ++reloads;
  if (reload_error) throw *reload_error;
}

ManagerClient::ManagerClient(sdbus::IConnection& connection)
    : ProxyInterfaces(connection, bus::kBusName, bus::kManagerPath) {
  registerProxy();
}

ManagerClient::~ManagerClient() { unregisterProxy(); }

FilesystemClient::FilesystemClient(sdbus::IConnection& connection, const std::string& path)
    : ProxyInterfaces(connection, bus::kBusName, path) {
  registerProxy();
}

FilesystemClient::~FilesystemClient() { unregisterProxy(); }

void ServiceHarness::SetUp() {
  TRIMD_REQUIRE_PROGRAM("dbus-daemon");
  bus_.emplace();
  config_.trim.chunk_bytes = kChunk;
  config_.trim.chunk_pause = Duration{0};
  config_.trim.skip_rotational = false;
  manager_ = std::make_unique<Manager>(config_, StateMap{}, control_.now());
  manager_->update_filesystems({fake_filesystem(kIdA, kMountA, "fakea", kFsSize),
                                fake_filesystem(kIdB, kMountB, "fakeb", kFsSize)},
                               control_.now());
  loop_ = std::make_unique<EventLoop>();
  quit_timer_ = std::make_unique<Timer>(*loop_, [this] { loop_->quit(); });
  Options options;
  options.bus_address = bus_->address();
  service_ = make_bus_service(*loop_, *manager_, control_, options);
  ASSERT_NE(service_, nullptr);

  client_connection_ = sdbus::createSessionBusConnectionWithAddress(bus_->address());
  match_ = client_connection_->addMatch("type='signal',path_namespace='/org/trimd/trimd1'",
                                        [this](sdbus::Message& message) { record(message); });
  client_connection_->enterEventLoopAsync();
  client_ = std::make_unique<ManagerClient>(*client_connection_);
}

void ServiceHarness::disconnect_client() {
  client_.reset();
  match_.reset();
  if (client_connection_) client_connection_->leaveEventLoop();
  client_connection_.reset();
}

void ServiceHarness::TearDown() {
  disconnect_client();
  service_.reset();
  quit_timer_.reset();
  loop_.reset();
  bus_.reset();
}

bool ServiceHarness::pump_until(const std::function<bool()>& done,
                                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    quit_timer_->arm_in(std::chrono::milliseconds{5});
    loop_->run();
  }
  return true;
}

void ServiceHarness::pump_for(std::chrono::milliseconds how_long) {
  const auto until = std::chrono::steady_clock::now() + how_long;
  pump_until([until] { return std::chrono::steady_clock::now() >= until; }, how_long * 2);
}

std::string ServiceHarness::error_of(const std::function<void()>& f) {
  try {
    call(f);
  } catch (const sdbus::Error& e) {
    return e.getName();
  }
  return "";
}

std::vector<ChunkJob> ServiceHarness::take_jobs() { return manager_->take_jobs(control_.now()); }

void ServiceHarness::finish(const ChunkJob& job, std::uint64_t bytes_discarded) {
  ChunkResult result;
  result.outcome.status = TrimStatus::Ok;
  result.outcome.bytes_reported = job.range.len;
  result.bytes_discarded = bytes_discarded;
  result.elapsed = std::chrono::milliseconds{1};
  manager_->chunk_finished(job, result, control_.now());
}

std::string ServiceHarness::fs_path(const std::string& id) const {
  return bus::filesystem_object_path(id);
}

namespace {

// Only the value types trimd's properties use.
void decode_change(const std::string& name, sdbus::Variant& value, SeenSignal& seen) {
  seen.changed.push_back(name);
  if (value.containsValueOfType<std::string>())
    seen.text[name] = value.get<std::string>();
  else if (name == "Progress" && value.containsValueOfType<double>())
    seen.progress = value.get<double>();
}

}  // namespace

void ServiceHarness::record(sdbus::Message& message) {
  SeenSignal seen;
  seen.path = message.getPath();
  seen.interface = message.getInterfaceName();
  seen.member = message.getMemberName();
  if (seen.member == "PropertiesChanged") {
    std::map<std::string, sdbus::Variant> changed;
    message >> seen.changed_interface >> changed;
    for (auto& [name, value] : changed) decode_change(name, value, seen);
  } else if (seen.member == "TrimStarted" || seen.member == "InterfacesAdded" ||
             seen.member == "InterfacesRemoved") {
    sdbus::ObjectPath object;
    message >> object;
    seen.object = object;
  } else if (seen.member == "TrimFinished") {
    sdbus::ObjectPath object;
    std::uint64_t usec = 0;
    message >> object >> seen.result >> seen.bytes >> usec;
    seen.object = object;
  }
  std::lock_guard lock(mutex_);
  seen_.push_back(std::move(seen));
}

std::vector<SeenSignal> ServiceHarness::signals() const {
  std::lock_guard lock(mutex_);
  return seen_;
}

std::vector<SeenSignal> ServiceHarness::signals_named(const std::string& member) const {
  std::vector<SeenSignal> out;
  for (auto& s : signals())
    if (s.member == member) out.push_back(s);
  return out;
}

}  // namespace trimd::test
