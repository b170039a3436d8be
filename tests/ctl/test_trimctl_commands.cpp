// trimctl status, the one-call commands, usage errors and reachability,
// against the fake trimd on a private bus.
#include <unistd.h>

#include <climits>
#include <filesystem>

#include "trimctl_fixture.hpp"

using namespace trimctl_test;

namespace {

class TrimctlStatus : public TrimctlTest {};
class TrimctlTrim : public TrimctlTest {};
class TrimctlControl : public TrimctlTest {};
class TrimctlUsage : public TrimctlTest {};
class TrimctlReachability : public TrimctlTest {};

// "Tue 2026-12-01 09:00 UTC"
const std::string kAbsoluteTime = "Aaa 9999-99-99 99:99 UTC";

TEST_F(TrimctlStatus, ShowsARowPerFilesystemWithTypeDeviceAndState) {
  const auto result = trimctl({"status"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string fast = line_with(result.out, "/mnt/fast");
  EXPECT_NE(fast.find("ext4"), std::string::npos) << fast;
  EXPECT_NE(fast.find("/dev/nvme0n1p2"), std::string::npos) << fast;
  EXPECT_NE(fast.find("scheduled"), std::string::npos) << fast;
  const std::string data = line_with(result.out, "/dev/sdb1");
  EXPECT_NE(data.find("xfs"), std::string::npos) << data;
  EXPECT_NE(data.find("waiting"), std::string::npos) << data;
  EXPECT_NE(line_with(result.out, "MOUNT").find("NEXT TRIM"), std::string::npos) << result.out;
}

TEST_F(TrimctlStatus, ShowsLastAndNextTrimAbsoluteAndRelativeWithHumanSizes) {
  const auto result = trimctl({"status"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string fast = line_with(result.out, "/mnt/fast");
  EXPECT_NE(fast.find("UTC; 3 days ago"), std::string::npos) << fast;
  EXPECT_NE(fast.find("UTC; 2h left"), std::string::npos) << fast;
  EXPECT_TRUE(contains_shape(fast, kAbsoluteTime)) << fast;
  EXPECT_NE(fast.find("success"), std::string::npos) << fast;
  EXPECT_NE(fast.find("1.5 GiB"), std::string::npos) << fast;
  EXPECT_NE(line_with(result.out, "/dev/sdb1").find("never"), std::string::npos) << result.out;
}

TEST_F(TrimctlStatus, WarnsAboutFilesystemsMountedWithDiscard) {
  const auto result = trimctl({"status"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("warning: /data is mounted with 'discard': deletes pay for inline "
                            "TRIM; remount with nodiscard and let trimd trim"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("warning: /mnt/fast"), std::string::npos) << result.out;
}

TEST_F(TrimctlStatus, PrintsJsonWithEveryFilesystemAndItsProperties) {
  const auto result = trimctl({"status", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(python_json(result.out, "[f['mount_point'] for f in doc['filesystems']]"),
            "['/data', '/mnt/fast']");
  EXPECT_EQ(python_json(result.out, "[f['inline_discard'] for f in doc['filesystems']]"),
            "[True, False]");
  EXPECT_EQ(python_json(result.out, "doc['filesystems'][1]['last_bytes_trimmed']"),
            std::to_string(kFastLastBytes));
  EXPECT_EQ(python_json(result.out, "doc['manager']['state']"), "idle");
}

TEST_F(TrimctlStatus, ShowsOnlyTheNamedMountPoints) {
  const auto result = trimctl({"status", "/data"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(line_with(result.out, "/dev/sdb1"), "");
  EXPECT_EQ(line_with(result.out, "/mnt/fast"), "") << result.out;
}

TEST_F(TrimctlStatus, FailsForAMountPointTrimdDoesNotTrack) {
  const auto result = trimctl({"status", "/nowhere"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("/nowhere is not a filesystem trimd tracks"), std::string::npos)
      << result.err;
}

TEST_F(TrimctlStatus, TakesTheBusAddressFromTheEnvironment) {
  ChildOptions options = trimctl_options();
  options.environment["TRIMCTL_BUS_ADDRESS"] = bus_->address();
  const auto result = run_child({TRIMCTL_BINARY, "status"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(line_with(result.out, "/mnt/fast"), "");
}

TEST_F(TrimctlStatus, FindsTheSystemBusThroughDbusSystemBusAddress) {
  ChildOptions options = trimctl_options();
  options.environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus_->address();
  const auto result = run_child({TRIMCTL_BINARY, "status"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(line_with(result.out, "/mnt/fast"), "");
}

TEST_F(TrimctlTrim, SendsTheCurrentDirectoryForDot) {
  char resolved[PATH_MAX];
  ASSERT_NE(realpath(bus_->directory().c_str(), resolved), nullptr);
  ChildOptions options = trimctl_options();
  options.working_directory = bus_->directory().string();
  FakeFilesystem here = fast_filesystem(realtime_usec());
  here.id = "here";
  here.mount_point = resolved;
  fake_->add_filesystem(here);

  const auto result = trimctl({"trim", "."}, options);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto calls = fake_->calls();
  ASSERT_EQ(calls.trim_now.size(), 1u);
  EXPECT_EQ(calls.trim_now[0], std::vector<std::string>{resolved});
}

TEST_F(TrimctlTrim, PassesIgnoreIdleToTrimNow) {
  ASSERT_EQ(trimctl({"trim", "--ignore-idle", "/mnt/fast"}).exit_code, 0);
  ASSERT_EQ(trimctl({"trim"}).exit_code, 0);
  const auto calls = fake_->calls();
  ASSERT_EQ(calls.trim_now.size(), 2u);
  EXPECT_EQ(calls.trim_now[0], std::vector<std::string>{"/mnt/fast"});
  EXPECT_TRUE(calls.trim_now_ignore_idle[0]);
  EXPECT_TRUE(calls.trim_now[1].empty());
  EXPECT_FALSE(calls.trim_now_ignore_idle[1]);
}

TEST_F(TrimctlTrim, ReportsTheDaemonsErrorForAnUnknownMountPoint) {
  for (const auto& arguments : std::vector<std::vector<std::string>>{
           {"trim", "/nowhere"}, {"trim", "--wait", "/nowhere"}}) {
    const auto result = trimctl(arguments);
    EXPECT_EQ(result.exit_code, 1) << arguments.size();
    EXPECT_NE(result.err.find("trimctl: /nowhere is not a filesystem trimd tracks "
                              "(org.trimd.trimd1.Error.NotFound)"),
              std::string::npos)
        << result.err;
  }
}

TEST_F(TrimctlControl, SendsAbsoluteMountPointsToPauseResumeAndCancel) {
  ASSERT_EQ(trimctl({"pause", "/mnt/fast/"}).exit_code, 0);
  ASSERT_EQ(trimctl({"resume"}).exit_code, 0);
  ASSERT_EQ(trimctl({"cancel", "/mnt/../data"}).exit_code, 0);
  const auto calls = fake_->calls();
  ASSERT_EQ(calls.pause.size(), 1u);
  EXPECT_EQ(calls.pause[0], std::vector<std::string>{"/mnt/fast"});
  ASSERT_EQ(calls.resume.size(), 1u);
  EXPECT_TRUE(calls.resume[0].empty());
  ASSERT_EQ(calls.cancel.size(), 1u);
  EXPECT_EQ(calls.cancel[0], std::vector<std::string>{"/data"});
}

TEST_F(TrimctlControl, ReportsAFailedReloadWithTheErrorNameAndWhatToDo) {
  ASSERT_EQ(trimctl({"reload"}).exit_code, 0);
  fake_->fail_reload_with("org.trimd.trimd1.Error.ConfigInvalid",
                          "/etc/trimd/trimd.toml:3:7: unknown key 'idle_tresh'");
  const auto result = trimctl({"reload"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("trimctl: /etc/trimd/trimd.toml:3:7: unknown key 'idle_tresh' "
                            "(org.trimd.trimd1.Error.ConfigInvalid); fix the file"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(fake_->calls().reloads, 2);
}

TEST_F(TrimctlControl, NotifyFreedParsesHumanSizes) {
  ASSERT_EQ(trimctl({"notify-freed", "/data", "50GiB"}).exit_code, 0);
  ASSERT_EQ(trimctl({"notify-freed", "/data", "1.5T"}).exit_code, 0);
  ASSERT_EQ(trimctl({"notify-freed", "/mnt/fast", "4096"}).exit_code, 0);
  ASSERT_EQ(trimctl({"notify-freed", "/data", "2PiB"}).exit_code, 0);  // as trimd.toml reads it
  const auto freed = fake_->calls().notify_freed;
  ASSERT_EQ(freed.size(), 4u);
  EXPECT_EQ(freed[0], std::make_pair(std::string("/data"), uint64_t{50} << 30));
  EXPECT_EQ(freed[1], std::make_pair(std::string("/data"), uint64_t{3} << 39));
  EXPECT_EQ(freed[2], std::make_pair(std::string("/mnt/fast"), uint64_t{4096}));
  EXPECT_EQ(freed[3], std::make_pair(std::string("/data"), uint64_t{2} << 50));
}

TEST_F(TrimctlUsage, BadCommandLinesExitTwoWithoutCallingTrimd) {
  const std::vector<std::vector<std::string>> bad{{"frobnicate"},
                                                  {"reload", "/data"},
                                                  {"notify-freed", "/data"},
                                                  {"notify-freed", "/data", "12XB"},
                                                  {"pause", "--wait"},
                                                  {"--bogus", "status"},
                                                  {"monitor", "extra"}};
  for (const auto& arguments : bad) {
    const auto result = trimctl(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments[0] << " " << result.err;
    EXPECT_NE(result.err.find("see 'trimctl --help'"), std::string::npos) << result.err;
  }
  const auto calls = fake_->calls();
  EXPECT_EQ(calls.reloads, 0);
  EXPECT_TRUE(calls.notify_freed.empty());
  EXPECT_TRUE(calls.pause.empty());
}

TEST_F(TrimctlReachability, ExitsThreeWhenNobodyOwnsTheName) {
  fake_.reset();
  for (const auto& command : {"status", "trim", "reload"}) {
    const auto result = trimctl({command});
    EXPECT_EQ(result.exit_code, 3) << command;
    EXPECT_NE(result.err.find("trimctl: cannot reach trimd at "), std::string::npos) << result.err;
  }
}

TEST_F(TrimctlReachability, ExitsThreeWhenThereIsNoBus) {
  const std::string nowhere = "unix:path=" + (bus_->directory() / "no-such-socket").string();
  const auto result = run_child({TRIMCTL_BINARY, "--address", nowhere, "status"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_NE(result.err.find("cannot reach trimd at " + nowhere), std::string::npos) << result.err;
}

TEST_F(TrimctlReachability, SaysToCheckTrimdServiceWhenTheSystemBusHasNoTrimd) {
  ChildOptions options = trimctl_options();
  options.environment["DBUS_SYSTEM_BUS_ADDRESS"] =
      "unix:path=" + (bus_->directory() / "none").string();
  const auto result = run_child({TRIMCTL_BINARY, "status"}, options);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.err,
            "trimctl: cannot reach trimd on the system bus (is trimd.service running?)\n");
}

}  // namespace
