// trimd's clients of logind and UPower (daemon/bus_logind.*, bus_upower.*)
// on a private bus, against stand-ins that own org.freedesktop.login1 and
// org.freedesktop.UPower: the delay lock's arguments, its fd (the stand-in
// sees its release), the signals with their values (and none from a
// connection that is not logind's), and both services missing.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "bus_connection.hpp"
#include "bus_fixture.hpp"
#include "bus_logind.hpp"
#include "bus_upower.hpp"
#include "event_loop.hpp"
#include "stand_ins.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

class BusMachine : public ::testing::Test {
 protected:
  void SetUp() override {
    TRIMD_REQUIRE_PROGRAM("dbus-daemon");
    bus_.emplace();
    connection_.emplace(loop_, bus_->address());
  }

  // Runs trimd's side (the loop) until `done` holds, at most `timeout`.
  bool run_until(const std::function<bool()>& done, std::chrono::milliseconds timeout = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool ok = done();
    Timer check(loop_, [&] {
      if ((ok = done()) || std::chrono::steady_clock::now() >= deadline) loop_.quit();
    });
    if (!ok) {
      check.arm_every(std::chrono::milliseconds{2});
      loop_.run();
    }
    return ok;
  }

  std::optional<Logind::Lock> inhibit(Logind& logind) {
    std::optional<Logind::Lock> answer;
    logind.inhibit("a pass", [&](Logind::Lock lock) { answer = std::move(lock); });
    run_until([&] { return answer.has_value(); });
    return answer;
  }

  std::optional<bool> read_on_battery(UPower& upower) {
    std::optional<std::optional<bool>> answer;
    upower.read_on_battery([&](std::optional<bool> value) { answer = value; });
    run_until([&] { return answer.has_value(); });
    return answer.value_or(std::nullopt);
  }

  std::optional<PrivateBus> bus_;
  EventLoop loop_;
  std::optional<bus::BusConnection> connection_;
};

TEST_F(BusMachine, TrimdTakesADelayLockOnSleepAndShutdownAndLogindSeesItsRelease) {
  LogindStandIn logind(bus_->address());
  bus::BusLogind client(loop_, *connection_);
  auto lock = inhibit(client);
  ASSERT_TRUE(lock);
  ASSERT_GE(lock->fd.get(), 0) << lock->error;
  EXPECT_EQ(::fcntl(lock->fd.get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC)
      << "a FITRIM runner must not inherit the lock";
  const auto inhibitors = logind.inhibitors();
  ASSERT_EQ(inhibitors.size(), 1u);
  EXPECT_EQ(inhibitors[0].what, "sleep:shutdown");
  EXPECT_EQ(inhibitors[0].who, "trimd");
  EXPECT_EQ(inhibitors[0].why, "a pass");
  EXPECT_EQ(inhibitors[0].mode, "delay");
  EXPECT_EQ(logind.held(), 1u);

  lock->fd.reset();
  EXPECT_TRUE(logind.wait_released(0, 10s)) << "closing trimd's copy releases the lock";
}

TEST_F(BusMachine, PrepareForSleepAndShutdownReachTrimdWithTheirValue) {
  LogindStandIn logind(bus_->address());
  bus::BusLogind client(loop_, *connection_);
  std::vector<std::pair<PowerDown, bool>> seen;
  client.on_prepare([&](PowerDown what, bool coming) { seen.emplace_back(what, coming); });
  logind.prepare_for_sleep(true);
  ASSERT_TRUE(run_until([&] { return seen.size() == 1; }));
  logind.prepare_for_sleep(false);
  logind.prepare_for_shutdown(true);
  ASSERT_TRUE(run_until([&] { return seen.size() == 3; }));
  EXPECT_EQ(seen[0], std::make_pair(PowerDown::Sleep, true));
  EXPECT_EQ(seen[1], std::make_pair(PowerDown::Sleep, false));
  EXPECT_EQ(seen[2], std::make_pair(PowerDown::Shutdown, true));
}

TEST_F(BusMachine, ASleepSignalFromAConnectionThatIsNotLogindIsIgnored) {
  LogindStandIn logind(bus_->address());
  bus::BusLogind client(loop_, *connection_);
  std::vector<std::pair<PowerDown, bool>> seen;
  client.on_prepare([&](PowerDown what, bool coming) { seen.emplace_back(what, coming); });
  auto impostor_connection = sdbus::createSessionBusConnectionWithAddress(bus_->address());
  auto impostor = sdbus::createObject(*impostor_connection, "/org/freedesktop/login1");
  impostor->registerSignal("PrepareForSleep")
      .onInterface("org.freedesktop.login1.Manager")
      .withParameters<bool>();
  impostor->finishRegistration();
  impostor->emitSignal("PrepareForSleep")
      .onInterface("org.freedesktop.login1.Manager")
      .withArguments(true);
  logind.prepare_for_shutdown(true);  // sent after the impostor's
  ASSERT_TRUE(run_until([&] { return !seen.empty(); }));
  run_until([] { return false; }, 100ms);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, PowerDown::Shutdown);
}

TEST_F(BusMachine, WithoutLogindOnTheBusTheAnswerSaysSo) {
  bus::BusLogind client(loop_, *connection_);
  auto lock = inhibit(client);
  ASSERT_TRUE(lock);
  EXPECT_LT(lock->fd.get(), 0);
  EXPECT_TRUE(lock->no_logind) << lock->error;
}

TEST_F(BusMachine, UPowerTellsOnBatteryAndItsChanges) {
  UPowerStandIn upower(bus_->address(), true);
  bus::BusUPower client(loop_, *connection_);
  std::vector<bool> changes;
  client.on_change([&](bool on_battery) { changes.push_back(on_battery); });
  EXPECT_EQ(read_on_battery(client), std::optional<bool>(true));
  upower.set_on_battery(false);
  ASSERT_TRUE(run_until([&] { return !changes.empty(); }));
  EXPECT_EQ(changes, std::vector<bool>{false});
  EXPECT_EQ(read_on_battery(client), std::optional<bool>(false));
}

TEST_F(BusMachine, WithoutUPowerOnTheBusOnBatteryIsUnknown) {
  bus::BusUPower client(loop_, *connection_);
  EXPECT_EQ(read_on_battery(client), std::nullopt);
}

}  // namespace
}  // namespace trimd::test
