// The bus service in-process: a Manager over fake filesystems, chunk jobs
// run by the test itself (no FITRIM), the real BusService on a private bus,
// and a client that talks to it through the proxy generated from the same
// XML. The service runs on the test thread's EventLoop; client calls run on
// a helper thread meanwhile (a blocking call would deadlock otherwise).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <sdbus-c++/sdbus-c++.h>

#include "bus_fixture.hpp"
#include "bus_service.hpp"
#include "daemon.hpp"
#include "event_loop.hpp"
#include "manager.hpp"
#include "trimd1_proxy.h"

namespace trimd::test {

// A filesystem as discovery would report it, on its own fake disk.
DiscoveredFs fake_filesystem(const std::string& id, const std::string& mount_point,
                             const std::string& disk, std::uint64_t size);

class FakeControl final : public DaemonControl {
 public:
  void reload() override;
  void kick() override { ++kicks; }
  TimePoint now() const override { return Clock::now(); }
  void take_over(const std::vector<std::string>& ids) override { taken_over.push_back(ids); }
  void hand_back(const std::vector<std::string>& ids) override { handed_back.push_back(ids); }

  std::vector<std::vector<std::string>> taken_over;   // TakeOver calls, by id
  std::vector<std::vector<std::string>> handed_back;  // HandBack calls
  std::optional<ConfigError> reload_error;            // thrown by reload() when set
  int reloads = 0;
  int kicks = 0;
};

// One signal from trimd's objects, decoded on the client's thread.
struct SeenSignal {
  std::string path;
  std::string interface;
  std::string member;
  std::string object;  // the object path argument of Trim* and Interfaces*
  std::string result;  // TrimFinished
  std::uint64_t bytes = 0;
  std::string changed_interface;            // PropertiesChanged
  std::vector<std::string> changed;         // its property names
  std::map<std::string, std::string> text;  // string-valued ones
  std::optional<double> progress;
};

class ManagerClient final
    : public sdbus::ProxyInterfaces<org::trimd::trimd1::Manager_proxy, sdbus::ObjectManager_proxy,
                                    sdbus::Properties_proxy> {
 public:
  explicit ManagerClient(sdbus::IConnection& connection);
  ~ManagerClient();

 private:
  // Signals are recorded by the client's match rule, not here.
  void onTrimStarted(const sdbus::ObjectPath&) override {}
  void onTrimFinished(const sdbus::ObjectPath&, const std::string&, const uint64_t&,
                      const uint64_t&) override {}
  void onInterfacesAdded(
      const sdbus::ObjectPath&,
      const std::map<std::string, std::map<std::string, sdbus::Variant>>&) override {}
  void onInterfacesRemoved(const sdbus::ObjectPath&, const std::vector<std::string>&) override {}
  void onPropertiesChanged(const std::string&, const std::map<std::string, sdbus::Variant>&,
                           const std::vector<std::string>&) override {}
};

class FilesystemClient final : public sdbus::ProxyInterfaces<org::trimd::trimd1::Filesystem_proxy> {
 public:
  FilesystemClient(sdbus::IConnection& connection, const std::string& path);
  ~FilesystemClient();
};

class ServiceHarness : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kChunk = 1 << 20;
  static constexpr std::uint64_t kFsSize = 8 * kChunk;
  static const char* const kIdA;
  static const char* const kMountA;
  static const char* const kIdB;
  static const char* const kMountB;

  void SetUp() override;
  void TearDown() override;
  // Closes the client side (sdbus-c++'s own loop thread must not see the bus die).
  void disconnect_client();

  // Runs the loop until `done` holds (false after `timeout`).
  bool pump_until(const std::function<bool()>& done,
                  std::chrono::milliseconds timeout = std::chrono::seconds{5});
  void pump_for(std::chrono::milliseconds how_long);

  // A blocking client call, made on a helper thread while the loop runs
  // until it returns. The loop must not stop first: the service would stop
  // reading and the call could never end. `f` bounds its own wait (sdbus's
  // call timeout, run_command's limit).
  template <typename F>
  auto call(F&& f) -> decltype(f()) {
    auto future = std::async(std::launch::async, std::forward<F>(f));
    const auto returned = [&] {
      return future.wait_for(std::chrono::seconds{0}) == std::future_status::ready;
    };
    while (!pump_until(returned, std::chrono::minutes{1})) {
    }
    return future.get();
  }
  // The org.trimd.trimd1.Error.* name a call fails with ("" if it succeeds).
  std::string error_of(const std::function<void()>& f);

  // The test is the executor: hand out jobs, report them done.
  std::vector<ChunkJob> take_jobs();
  void finish(const ChunkJob& job, std::uint64_t bytes_discarded);

  std::vector<SeenSignal> signals() const;
  std::vector<SeenSignal> signals_named(const std::string& member) const;
  std::string fs_path(const std::string& id) const;

  Config config_;
  FakeControl control_;
  std::optional<PrivateBus> bus_;
  std::unique_ptr<Manager> manager_;
  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<BusService> service_;
  std::unique_ptr<sdbus::IConnection> client_connection_;
  std::unique_ptr<ManagerClient> client_;

 private:
  void record(sdbus::Message& message);

  std::unique_ptr<Timer> quit_timer_;
  sdbus::Slot match_;
  mutable std::mutex mutex_;
  std::vector<SeenSignal> seen_;
};

}  // namespace trimd::test
