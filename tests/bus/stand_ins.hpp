// Stand-ins for the system services trimd asks about the machine, owning
// their real names on a private bus (tests/common/bus-system.conf lets root own
// any): logind (org.freedesktop.login1: Inhibit hands out a pipe's write
// end and keeps the read end, so the stand-in sees the lock's release as
// EOF; it emits PrepareForSleep / PrepareForShutdown) and UPower
// (org.freedesktop.UPower: OnBattery, PropertiesChanged). Each runs its own
// connection on its own thread; what the test asks of it is done on that
// thread, through a method of the test's own interface.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sdbus-c++/sdbus-c++.h>

#include "unique_fd.hpp"

namespace trimd::test {

using SteadyTime = std::chrono::steady_clock::time_point;

class LogindStandIn {
 public:
  explicit LogindStandIn(const std::string& bus_address);
  ~LogindStandIn();
  LogindStandIn(const LogindStandIn&) = delete;
  LogindStandIn& operator=(const LogindStandIn&) = delete;

  struct Inhibitor {
    std::string what, who, why, mode;
    SteadyTime taken{};
    std::optional<SteadyTime> released;  // when its pipe saw EOF
  };
  std::vector<Inhibitor> inhibitors() const;
  // How many locks are held now (not yet released).
  std::size_t held() const;
  // The `n`th lock's release (0-based), waited for up to `timeout`.
  std::optional<SteadyTime> wait_released(std::size_t n, std::chrono::milliseconds timeout) const;

  // Emitted from the stand-in's thread; returns the moment just before.
  SteadyTime prepare_for_sleep(bool start);
  SteadyTime prepare_for_shutdown(bool start);

 private:
  SteadyTime emit(const std::string& signal, bool start);
  void watch_pipes();

  std::unique_ptr<sdbus::IConnection> connection_;
  std::unique_ptr<sdbus::IObject> object_;
  std::unique_ptr<sdbus::IConnection> control_;  // the test's side
  std::unique_ptr<sdbus::IProxy> control_proxy_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<Inhibitor> inhibitors_;
  std::vector<UniqueFd> read_ends_;  // parallel to inhibitors_; reset at EOF
  UniqueFd wake_;                    // eventfd: a new pipe, or stop
  std::atomic<bool> stop_{false};
  std::thread watcher_;
};

class UPowerStandIn {
 public:
  UPowerStandIn(const std::string& bus_address, bool on_battery);
  ~UPowerStandIn();
  UPowerStandIn(const UPowerStandIn&) = delete;
  UPowerStandIn& operator=(const UPowerStandIn&) = delete;

  // Sets OnBattery and emits PropertiesChanged, from the stand-in's thread.
  void set_on_battery(bool on_battery);

 private:
  std::unique_ptr<sdbus::IConnection> connection_;
  std::unique_ptr<sdbus::IObject> object_;
  std::unique_ptr<sdbus::IConnection> control_;
  std::unique_ptr<sdbus::IProxy> control_proxy_;
  std::atomic<bool> on_battery_;
};

}  // namespace trimd::test
