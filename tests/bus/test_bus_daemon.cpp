// The real trimd binary on a private bus, seen through busctl and
// dbus-send as an admin would. Its config disables trimming, so the
// machine's own filesystems are only looked at, never trimmed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>

#include "bus_fixture.hpp"
#include "trimd_log.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Stops `pid` (SIGSTOP) for `time` from when it has stopped, then continues
// it, on every path; how long it was surely stopped, or nothing when it did
// not stop within 10 s.
std::optional<std::chrono::microseconds> hold_stopped(pid_t pid, std::chrono::milliseconds time) {
  struct Continue {
    pid_t pid;
    ~Continue() { ::kill(pid, SIGCONT); }
  } continue_on_exit{pid};
  if (::kill(pid, SIGSTOP) != 0) return std::nullopt;
  // Stopped when the parent hears so: every thread has taken the signal.
  const auto stopped = wait_until(
      [&] {
        siginfo_t info{};
        return ::waitid(P_PID, static_cast<id_t>(pid), &info, WSTOPPED | WNOHANG | WNOWAIT) == 0 &&
               info.si_pid == pid;
      },
      std::chrono::seconds{10}, std::chrono::milliseconds{2});
  if (!stopped) return std::nullopt;
  const auto since = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(time);  // the experiment: trimd held for this long
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                               since);
}

// A private bus and a config; each test starts trimd as it needs.
class DaemonStartup : public ::testing::Test {
 protected:
  void SetUp() override {
    TRIMD_REQUIRE_PROGRAM("dbus-daemon");
    TRIMD_REQUIRE_PROGRAM("busctl");
    TRIMD_REQUIRE_PROGRAM("dbus-send");
    bus_.emplace();
    write_config("[trim]\nenabled = false\n");
  }

  void TearDown() override {
    if (trimd_) {
      EXPECT_EQ(trimd_->stop(), 0) << "trimd did not stop cleanly on SIGTERM; its log:\n" << log();
    }
  }

  // `bus_argument` is passed as is ("--bus-address=..."), or left out when empty.
  void start(std::vector<std::string> prefix, const std::string& bus_argument) {
    std::vector<std::string> argv = std::move(prefix);
    argv.insert(argv.end(),
                {TRIMD_BINARY, "--state-dir=" + (dir_.path() / "state").string(),
                 "--config=" + config_path(), "--log-level=debug", "--log-format=json"});
    if (!bus_argument.empty()) argv.push_back(bus_argument);
    trimd_.emplace(argv, stderr_to(log_path()));
  }

  std::string config_path() const { return (dir_.path() / "trimd.toml").string(); }
  std::string log_path() const { return (dir_.path() / "trimd.log").string(); }
  void write_config(const std::string& text) const { std::ofstream(config_path()) << text; }
  std::string raw_log() const {
    std::ifstream in(log_path());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::string log() const { return readable_log(raw_log()); }
  std::size_t events(EventId id) const { return entries_of(raw_log(), id).size(); }

  bool name_has_owner() {
    auto owner = run_command(
        bus_->busctl({"call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                      "org.freedesktop.DBus", "NameHasOwner", "s", "org.trimd.trimd1"}));
    return owner.out.find("true") != std::string::npos;
  }

  bool wait_for_name() {
    bool owned = false;
    wait_until([&] { return (owned = name_has_owner()) || !trimd_->running(); },
               std::chrono::seconds{15}, std::chrono::milliseconds{50});
    return owned;
  }

  // Waits for the `nth` event `id` in the log, or for trimd to exit.
  bool wait_for_event(EventId id, std::size_t nth = 1) {
    return wait_until([&] { return events(id) >= nth || !trimd_->running(); },
                      std::chrono::seconds{10}) &&
           events(id) >= nth;
  }

  CommandResult busctl(std::vector<std::string> args) {
    return run_command(bus_->busctl(std::move(args)));
  }

  TempDir dir_;
  std::optional<PrivateBus> bus_;
  std::optional<ChildProcess> trimd_;
};

// trimd serving the private bus given with --bus-address.
class RealDaemon : public DaemonStartup {
 protected:
  void SetUp() override {
    DaemonStartup::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    start({}, "--bus-address=" + bus_->address());
    ASSERT_TRUE(wait_for_name()) << "trimd did not claim org.trimd.trimd1; its log:\n" << log();
  }
};

TEST_F(DaemonStartup, ServesTheSystemBusNamedByDbusSystemBusAddress) {
  start({"env", "DBUS_SYSTEM_BUS_ADDRESS=" + bus_->address()}, "");
  EXPECT_TRUE(wait_for_name()) << log();
}

TEST_F(DaemonStartup, KeepsRunningWithoutTheApiWhenTheBusCannotBeReached) {
  start({}, "--bus-address=unix:path=" + (dir_.path() / "no-bus-here").string());
  ASSERT_TRUE(wait_for_event(EventId::DaemonStarted)) << log();
  // Its loop still serves: a reload is answered, and SIGTERM (TearDown)
  // stops it cleanly.
  ASSERT_EQ(::kill(trimd_->pid(), SIGHUP), 0);
  EXPECT_TRUE(wait_for_event(EventId::ConfigReloaded)) << log();
  EXPECT_EQ(events(EventId::DaemonStarted), 1u) << log();
  EXPECT_TRUE(trimd_->running()) << log();
  EXPECT_FALSE(name_has_owner());
}

// The bus's RequestName reply says the name is taken: a second trimd must
// not trim the same disks, so it exits and the first keeps the name.
TEST_F(RealDaemon, ASecondTrimdOnTheSameBusExitsAndTheFirstKeepsTheName) {
  const std::string second_log = (dir_.path() / "second.log").string();
  ChildProcess second({TRIMD_BINARY, "--state-dir=" + (dir_.path() / "state2").string(),
                       "--config=" + config_path(), "--bus-address=" + bus_->address()},
                      stderr_to(second_log));
  ASSERT_TRUE(wait_until([&] { return !second.running(); }, std::chrono::seconds{15}))
      << "the second trimd kept running";
  EXPECT_EQ(second.stop(), 1);
  const auto owner =
      busctl({"call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
              "GetConnectionUnixProcessID", "s", "org.trimd.trimd1"});
  EXPECT_EQ(owner.out, "u " + std::to_string(trimd_->pid()) + "\n") << owner.err;
  EXPECT_TRUE(trimd_->running());
}

TEST_F(RealDaemon, ShowsTheManagerObjectInBusctlTree) {
  auto tree = busctl({"tree", "org.trimd.trimd1"});
  EXPECT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_THAT(tree.out, HasSubstr("/org/trimd/trimd1"));
}

TEST_F(RealDaemon, IntrospectsTheManagerAndObjectManagerInterfaces) {
  auto introspect = busctl({"introspect", "org.trimd.trimd1", "/org/trimd/trimd1"});
  EXPECT_EQ(introspect.exit_code, 0) << introspect.err;
  EXPECT_THAT(introspect.out, HasSubstr("org.trimd.trimd1.Manager"));
  EXPECT_THAT(introspect.out, HasSubstr(".TrimNow"));
  EXPECT_THAT(introspect.out, HasSubstr(".TrimFinished"));
  EXPECT_THAT(introspect.out, HasSubstr("org.freedesktop.DBus.ObjectManager"));
}

TEST_F(RealDaemon, AnswersVersionAndState) {
  auto version = busctl({"get-property", "org.trimd.trimd1", "/org/trimd/trimd1",
                         "org.trimd.trimd1.Manager", "Version"});
  EXPECT_EQ(version.out, "s \"" TRIMD_TEST_VERSION "\"\n");
  auto state = busctl({"get-property", "org.trimd.trimd1", "/org/trimd/trimd1",
                       "org.trimd.trimd1.Manager", "State"});
  EXPECT_EQ(state.out, "s \"idle\"\n");
}

// While trimd is stopped (SIGSTOP) nothing it runs is on time: its diskstats
// sample, due every sample_interval, waits from its due time until trimd runs
// again, and EventLoopLatenessMaxUSec counts that wait: at least the time it
// was held stopped less one interval.
TEST_F(DaemonStartup, EventLoopLatenessMaxUSecCountsTheTimeTheLoopWasHeldUp) {
  constexpr auto kSampleInterval = std::chrono::milliseconds{100};
  write_config("[trim]\nenabled = false\n[idle]\nsample_interval = \"100ms\"\n");
  start({}, "--bus-address=" + bus_->address());
  ASSERT_TRUE(wait_for_name()) << log();
  const auto lateness = [&] {
    const auto got = busctl({"get-property", "org.trimd.trimd1", "/org/trimd/trimd1",
                             "org.trimd.trimd1.Manager", "EventLoopLatenessMaxUSec"});
    EXPECT_EQ(got.out.rfind("t ", 0), 0u) << got.out << got.err;
    return std::chrono::microseconds{got.out.size() > 2 ? std::stoull(got.out.substr(2)) : 0};
  };
  const auto before = lateness();

  const auto held = hold_stopped(trimd_->pid(), std::chrono::seconds{1});
  ASSERT_TRUE(held) << "trimd did not stop on SIGSTOP";
  std::chrono::microseconds after{0};
  EXPECT_TRUE(wait_until([&] { return (after = lateness()) >= *held - kSampleInterval; },
                         std::chrono::seconds{10}))
      << "held " << held->count() << " us; lateness before " << before.count() << " us, after "
      << after.count() << " us";
}

TEST_F(RealDaemon, GetFleetWithoutAFleetSectionIsNotSupported) {
  auto fleet = busctl(
      {"call", "org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager", "GetFleet"});
  EXPECT_NE(fleet.exit_code, 0);
  EXPECT_THAT(fleet.err, HasSubstr("no [fleet] in the policy"));
}

TEST_F(RealDaemon, ReloadOfABrokenConfigIsConfigInvalidNamingTheLine) {
  write_config("[trim]\nchunk_size = \"12 parsecs\"\n");
  auto reload = run_command(bus_->dbus_send(
      {"--dest=org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager.Reload"}));
  EXPECT_NE(reload.exit_code, 0);
  EXPECT_THAT(reload.err, HasSubstr("org.trimd.trimd1.Error.ConfigInvalid"));
  EXPECT_THAT(reload.err, HasSubstr(config_path() + ":2:"));

  // The daemon is still there, with its old configuration.
  auto version = busctl({"get-property", "org.trimd.trimd1", "/org/trimd/trimd1",
                         "org.trimd.trimd1.Manager", "Version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
}

TEST_F(RealDaemon, ReloadOfAGoodConfigSucceeds) {
  write_config("[trim]\nenabled = false\nchunk_size = \"256MiB\"\n");
  auto reload = busctl(
      {"call", "org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager", "Reload"});
  EXPECT_EQ(reload.exit_code, 0) << reload.err;
  EXPECT_EQ(events(EventId::ConfigReloaded), 1u) << log();
}

TEST_F(RealDaemon, ReloadRefusesAPasswordFileOthersMayReadAndKeepsTheOldConfig) {
  const std::string password = (dir_.path() / "etcd.password").string();
  std::ofstream(password) << "s3cret\n";
  ASSERT_EQ(::chmod(password.c_str(), 0644), 0);
  write_config("[fleet]\netcd = [\"http://127.0.0.1:9\"]\nuser = \"trimd\"\npassword_file = \"" +
               password + "\"\n");
  auto reload = run_command(bus_->dbus_send(
      {"--dest=org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager.Reload"}));
  EXPECT_NE(reload.exit_code, 0);
  EXPECT_THAT(reload.err, HasSubstr("org.trimd.trimd1.Error.ConfigInvalid"));
  EXPECT_THAT(reload.err, HasSubstr("chmod 600 " + password));
  EXPECT_EQ(events(EventId::ConfigReloaded), 0u) << log();
  // Still without [fleet]: the old policy stayed.
  auto fleet = busctl(
      {"call", "org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager", "GetFleet"});
  EXPECT_THAT(fleet.err, HasSubstr("no [fleet] in the policy"));
}

TEST_F(RealDaemon, ReloadOfABrokenDropInNamesItAndKeepsTheOldPolicyUntilItIsFixed) {
  const auto drop_in = config_path() + ".d/50-x.toml";
  std::filesystem::create_directory(config_path() + ".d");
  std::ofstream(drop_in) << "[idle]\nwindow = \"2d\"\n";
  auto reload = run_command(bus_->dbus_send(
      {"--dest=org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager.Reload"}));
  EXPECT_NE(reload.exit_code, 0);
  EXPECT_THAT(reload.err, HasSubstr("org.trimd.trimd1.Error.ConfigInvalid"));
  EXPECT_THAT(reload.err, HasSubstr(drop_in + ":2:10: idle.window"));
  EXPECT_EQ(events(EventId::ConfigReloaded), 0u) << log();

  std::ofstream(drop_in) << "[idle]\nwindow = \"1min\"\n";
  reload = busctl(
      {"call", "org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager", "Reload"});
  EXPECT_EQ(reload.exit_code, 0) << reload.err;
  EXPECT_EQ(events(EventId::ConfigReloaded), 1u) << log();
}

TEST_F(RealDaemon, RefusesAReloadFromAnotherUser) {
  TRIMD_REQUIRE_PROGRAM("setpriv");
  auto reload = run_command(as_nobody(bus_->dbus_send(
      {"--dest=org.trimd.trimd1", "/org/trimd/trimd1", "org.trimd.trimd1.Manager.Reload"})));
  EXPECT_THAT(reload.err, HasSubstr("org.trimd.trimd1.Error.AccessDenied"));
  EXPECT_EQ(events(EventId::ConfigReloaded), 0u) << log();
}

// F8: a config path that is no regular file is an error at once, never a
// hang (a FIFO) or an endless read (/dev/zero).
class CheckConfig : public ::testing::Test {
 protected:
  CommandResult check(const std::string& path) {
    return run_command({TRIMD_BINARY, "--check-config", "--config=" + path},
                       std::chrono::seconds{10});
  }
  TempDir dir_;
};

TEST_F(CheckConfig, RefusesAFifoAtOnceWithExitStatus78) {
  const std::string fifo = (dir_.path() / "trimd.toml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto result = check(fifo);
  EXPECT_EQ(result.exit_code, 78) << result.err;
}

// [fleet]'s files are held to their rules by --check-config too.
class CheckFleetCredentials : public CheckConfig {
 protected:
  // A policy whose [fleet] logs in as "trimd" at `endpoint` with `password_file`.
  std::string policy(const std::string& password_file, const std::string& endpoint) {
    const std::string path = (dir_.path() / "trimd.toml").string();
    std::ofstream(path) << "[fleet]\netcd = [\"" << endpoint
                        << "\"]\nuser = \"trimd\"\npassword_file = \"" << password_file << "\"\n";
    return path;
  }
  std::string password(mode_t mode) {
    const std::string path = (dir_.path() / "etcd.password").string();
    std::ofstream(path) << "s3cret\n";
    EXPECT_EQ(::chmod(path.c_str(), mode), 0);
    return path;
  }
};

TEST_F(CheckFleetCredentials, AFifoAsPasswordFileIsRefusedAtOnceWithExitStatus78) {
  const std::string fifo = (dir_.path() / "etcd.password").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto result = check(policy(fifo, "http://127.0.0.1:2379"));
  EXPECT_FALSE(result.timed_out) << "blocked on the FIFO";
  EXPECT_EQ(result.exit_code, 78) << result.err;
  EXPECT_THAT(result.err, HasSubstr("fleet.password_file: " + fifo + " is a FIFO"));
}

TEST_F(CheckFleetCredentials, APasswordFileOthersMayReadFailsWithTheFix) {
  const std::string file = password(0644);
  const auto result = check(policy(file, "http://127.0.0.1:2379"));
  EXPECT_EQ(result.exit_code, 78) << result.err;
  EXPECT_THAT(result.err, HasSubstr("chmod 600 " + file));
}

TEST_F(CheckFleetCredentials, APasswordOverPlainHttpToAnotherHostIsValidButWarnedAbout) {
  const auto remote = check(policy(password(0600), "http://10.0.0.5:2379"));
  EXPECT_EQ(remote.exit_code, 0) << remote.err;
  EXPECT_THAT(remote.err, HasSubstr("warning: fleet: the password of etcd user \"trimd\" goes in "
                                    "clear over plain http:// to http://10.0.0.5:2379"));
  const auto local = check(policy(password(0600), "http://127.0.0.1:2379"));
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_THAT(local.err, Not(HasSubstr("warning")));
}

TEST_F(CheckConfig, RefusesAnEndlessDeviceAtOnceWithExitStatus78) {
  const auto result = check("/dev/zero");
  EXPECT_EQ(result.exit_code, 78) << result.err;
}

// --dry-run changes nothing on disk, not even a corrupt state file.
TEST_F(CheckConfig, DryRunLeavesACorruptStateFileWhereItIs) {
  const auto state_dir = dir_.path() / "state";
  std::filesystem::create_directory(state_dir);
  const std::string garbage = "[\"fs\"\nlast_bytes = = 3\n";
  std::ofstream(state_dir / "state.toml") << garbage;
  std::ofstream(dir_.path() / "trimd.toml") << "[trim]\nenabled = false\n";
  const auto result =
      run_command({TRIMD_BINARY, "--dry-run", "--config=" + (dir_.path() / "trimd.toml").string(),
                   "--state-dir=" + state_dir.string()},
                  std::chrono::seconds{60});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::ifstream in(state_dir / "state.toml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), garbage);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(state_dir), {}), 1);
}

}  // namespace
}  // namespace trimd::test
