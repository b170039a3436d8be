// Acceptance for taking over inline discard, with the real trimd on loop
// filesystems mounted with `discard` and several other options: taken over
// (mountinfo loses `discard` and nothing else), trimmed (the backing file
// shrinks after deletes), adopted after a restart without a second remount,
// and handed back on SIGTERM. xfs is reported, never remounted. Everything
// is read from mountinfo, the state file and --dry-run's report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <ctime>
#include <string>
#include <thread>

#include "loopfs.hpp"
#include "mount_table.hpp"
#include "trimd_process.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr std::uint64_t kImageMib = 320;
constexpr std::size_t kFiles = 200;
constexpr std::uint64_t kFileBytes = 256 * 1024;

// A trim window that is not now (two hours ahead, local time): the
// takeover happens, passes wait.
std::string window_not_now() {
  const std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char text[32];
  std::snprintf(text, sizeof text, "%02d:00-%02d:00", (local.tm_hour + 2) % 24,
                (local.tm_hour + 3) % 24);
  return text;
}

// Only the test's mount is trimmed and may be taken over.
std::string takeover_config(const std::string& mount_point, const std::string& extra_trim,
                            const std::string& extra_rule) {
  return "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\n\n"
         "[trim]\nenabled = false\nfirst_delay = \"0s\"\nrandomized_delay = \"0s\"\n" +
         extra_trim + "\n[[filesystem]]\nmatch = \"" + mount_point +
         "\"\nenabled = true\ninline_discard = \"takeover\"\n" + extra_rule;
}

const char* options_for(Fs fs) {
  return fs == Fs::Btrfs ? "discard=sync,noatime,nodev,autodefrag,commit=60"
                         : "discard,noatime,nodev,errors=remount-ro,commit=30";
}

std::string name_of(const ::testing::TestParamInfo<Fs>& param) { return fs_name(param.param); }

class Takeover : public ::testing::TestWithParam<Fs> {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(GetParam())));
  }

  std::optional<std::int64_t> state_int(const std::string& mnt, const std::string& key) const {
    return state_integer(sandbox_.state_file(), mnt, key);
  }

  // trimd in a mount namespace of its own where every mount is read-only
  // (its sandbox bind-mounted writable), as under the unit's
  // ProtectSystem=strict, stopped with SIGTERM after `seconds`.
  CommandResult run_in_private_namespace(const std::string& mnt, int seconds) const {
    const std::string config = sandbox_.config_path();
    const std::string dir = config.substr(0, config.rfind('/'));
    std::string command = "mount --bind " + dir + " " + dir + " && mount -o remount,bind,ro / && " +
                          "mount -o remount,bind,ro " + mnt + " && exec " + TRIMD_BINARY;
    for (const auto& arg : sandbox_.args()) command += " '" + arg + "'";
    // timeout(1) stops it with SIGTERM: a clean stop.
    return run_command({"timeout", "--preserve-status", "-s", "TERM", std::to_string(seconds),
                        "unshare", "-m", "--propagation", "private", "sh", "-c", command},
                       60s);
  }

  TrimdSandbox sandbox_;
};

TEST_P(Takeover, TakesOverTrimsSurvivesARestartAndHandsBackOnStop) {
  LoopImage image = LoopImage::create(kImageMib);
  image.mkfs(GetParam());
  image.mount(options_for(GetParam()));
  image.write_fragmented_files(kFiles, kFileBytes);
  const std::string& mnt = image.mount_point();
  const auto original = mount_entry_at(mnt);
  ASSERT_TRUE(original);
  ASSERT_EQ(discard_mode(*original), DiscardMode::Sync);

  // 1. Taken over; no pass yet (outside its window); kept on stop.
  sandbox_.write_config(takeover_config(mnt, "hand_back_on_stop = false\n",
                                        "window = \"" + window_not_now() + "\"\n"));
  std::optional<MountEntry> taken;
  std::int64_t taken_over_usec = 0;
  {
    TrimdProcess first(sandbox_.args(), sandbox_.log_path("first"));
    ASSERT_TRUE(wait_until([&] { return discard_mode_at(mnt) == DiscardMode::None; }, 15s))
        << first.log();
    ASSERT_TRUE(wait_until([&] { return state_int(mnt, "taken_over_usec").has_value(); }, 15s))
        << first.log();
    taken_over_usec = *state_int(mnt, "taken_over_usec");
    EXPECT_EQ(state_string(sandbox_.state_file(), mnt, "taken_over_by"), "policy");
    taken = mount_entry_at(mnt);
    ASSERT_TRUE(taken);
    EXPECT_EQ(taken->mount_id, original->mount_id);
    EXPECT_EQ(taken->mount_options, original->mount_options);
    EXPECT_EQ(super_options_but_discard(*taken), super_options_but_discard(*original));
    first.send(SIGTERM);
    EXPECT_EQ(first.wait_for_exit(10s), 0) << first.log();
  }
  EXPECT_EQ(discard_mode_at(mnt), DiscardMode::None) << "hand_back_on_stop = false was ignored";
  EXPECT_FALSE(state_int(mnt, "last_end_usec")) << "a pass ran outside its window";

  // 2. Deletes now pay no inline discard: the space stays allocated ...
  const std::uint64_t deleted = image.delete_every_other();
  const std::uint64_t after_delete = image.allocated_bytes();

  // 3. ... until trimd, restarted, adopts the takeover and trims.
  sandbox_.write_config(takeover_config(mnt, "", ""));
  TrimdProcess second(sandbox_.args(), sandbox_.log_path("second"));
  ASSERT_TRUE(wait_until(
      [&] {
        const auto end = state_int(mnt, "last_end_usec");
        return end && *end > taken_over_usec;
      },
      90s))
      << second.log();
  EXPECT_EQ(state_string(sandbox_.state_file(), mnt, "last_result"), "success");
  EXPECT_EQ(state_int(mnt, "taken_over_usec"), taken_over_usec) << "taken over a second time";
  const auto adopted = mount_entry_at(mnt);
  ASSERT_TRUE(adopted);
  EXPECT_EQ(adopted->mount_id, taken->mount_id);
  EXPECT_EQ(adopted->mount_options, taken->mount_options);
  EXPECT_EQ(adopted->super_options, taken->super_options);
  const std::uint64_t after_pass = image.allocated_bytes();
  EXPECT_LE(after_pass + deleted / 2, after_delete)
      << "deleted " << mib(deleted) << " MiB; allocated " << mib(after_delete) << " -> "
      << mib(after_pass) << " MiB";

  // 4. A clean stop gives `discard` back, every option as it was.
  second.send(SIGTERM);
  EXPECT_EQ(second.wait_for_exit(10s), 0) << second.log();
  const auto handed_back = mount_entry_at(mnt);
  ASSERT_TRUE(handed_back);
  EXPECT_EQ(handed_back->super_options, original->super_options);
  EXPECT_EQ(handed_back->mount_options, original->mount_options);
  EXPECT_FALSE(state_int(mnt, "taken_over_usec"));
}

// Issue 16, item 5: the admin unmounts a filesystem trimd took over and
// mounts it again without discard. That mount is not trimd's to change: the
// record goes, and a stop leaves the mount as the admin made it.
TEST_P(Takeover, GivesNoDiscardOnStopToAMountMadeAfterTheTakeover) {
  LoopImage image = LoopImage::create(kImageMib);
  image.mkfs(GetParam());
  image.mount(options_for(GetParam()));
  const std::string& mnt = image.mount_point();
  sandbox_.write_config(takeover_config(mnt, "", "window = \"" + window_not_now() + "\"\n"));
  TrimdProcess trimd(sandbox_.args(), sandbox_.log_path("trimd"));
  ASSERT_TRUE(wait_until([&] { return state_int(mnt, "taken_over_usec").has_value(); }, 15s))
      << trimd.log();

  image.unmount();
  image.mount("nodiscard,noatime,nodev");
  const auto admins = mount_entry_at(mnt);
  ASSERT_TRUE(admins);
  ASSERT_TRUE(wait_until([&] { return !state_int(mnt, "taken_over_usec").has_value(); }, 15s))
      << "the new mount is still recorded as taken over\n"
      << trimd.log();

  trimd.send(SIGTERM);
  EXPECT_EQ(trimd.wait_for_exit(10s), 0) << trimd.log();
  const auto after = mount_entry_at(mnt);
  ASSERT_TRUE(after);
  EXPECT_EQ(discard_mode(*after), DiscardMode::None) << "remounted the admin's mount with discard";
  EXPECT_EQ(after->super_options, admins->super_options);
}

// As under the unit's ProtectSystem=strict: trimd in a mount namespace of
// its own where every mount is read-only (its state directory bind-mounted
// writable). What it does must show outside, and only discard may change.
TEST_P(Takeover, FromAPrivateReadOnlyNamespaceIsSeenOutsideIt) {
  REQUIRE_TOOLS_OR_FAIL("unshare", "timeout", "sh");
  LoopImage image = LoopImage::create(kImageMib);
  image.mkfs(GetParam());
  image.mount(options_for(GetParam()));
  const std::string& mnt = image.mount_point();
  const auto original = mount_entry_at(mnt);
  ASSERT_TRUE(original);
  sandbox_.write_config(takeover_config(mnt, "", ""));
  CommandResult run;
  std::thread sandboxed([&] { run = run_in_private_namespace(mnt, 8); });
  const bool taken = wait_until([&] { return discard_mode_at(mnt) == DiscardMode::None; }, 7s);
  const auto during = mount_entry_at(mnt);
  sandboxed.join();
  ASSERT_TRUE(taken) << run.err;
  ASSERT_TRUE(during);
  EXPECT_FALSE(during->read_only()) << "the namespace's read-only view leaked";
  EXPECT_EQ(during->mount_options, original->mount_options);
  EXPECT_EQ(super_options_but_discard(*during), super_options_but_discard(*original));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(mount_entry_at(mnt)->super_options, original->super_options) << run.err;
}

// A restart under systemd starts trimd in a new namespace, whose copies of
// the mounts have new mount ids: the takeover is still adopted (by its
// superblock options), and the stop after it still hands back.
TEST_P(Takeover, IsAdoptedAfterARestartInANewMountNamespace) {
  REQUIRE_TOOLS_OR_FAIL("unshare", "timeout", "sh");
  LoopImage image = LoopImage::create(kImageMib);
  image.mkfs(GetParam());
  image.mount(options_for(GetParam()));
  const std::string& mnt = image.mount_point();
  const auto original = mount_entry_at(mnt);
  ASSERT_TRUE(original);
  const std::string window = "window = \"" + window_not_now() + "\"\n";

  sandbox_.write_config(takeover_config(mnt, "hand_back_on_stop = false\n", window));
  const CommandResult first = run_in_private_namespace(mnt, 4);
  EXPECT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(discard_mode_at(mnt), DiscardMode::None) << first.err;
  const auto since = state_int(mnt, "taken_over_usec");
  ASSERT_TRUE(since) << first.err;

  sandbox_.write_config(takeover_config(mnt, "", window));
  const CommandResult second = run_in_private_namespace(mnt, 4);
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(mount_entry_at(mnt)->super_options, original->super_options)
      << "the stop after the restart did not hand back\n"
      << second.err;
  EXPECT_FALSE(state_int(mnt, "taken_over_usec")) << second.err;
}

INSTANTIATE_TEST_SUITE_P(Ext4AndBtrfs, Takeover, ::testing::Values(Fs::Ext4, Fs::Btrfs), name_of);

class XfsTakeover : public Takeover {};

TEST_P(XfsTakeover, IsReportedWithItsReasonAndNeverRemounted) {
  LoopImage image = LoopImage::create(kImageMib);
  image.mkfs(Fs::Xfs);
  image.mount("discard,noatime");
  const std::string& mnt = image.mount_point();
  const auto before = mount_entry_at(mnt);
  ASSERT_TRUE(before);
  sandbox_.write_config(takeover_config(mnt, "", ""));

  const auto report = run_command(std::vector<std::string>{TRIMD_BINARY, "--dry-run", "--config",
                                                           sandbox_.config_path(), "--state-dir",
                                                           sandbox_.state_dir()});
  ASSERT_TRUE(report.ok()) << report.err;
  EXPECT_THAT(report.out, HasSubstr("not taken over: xfs keeps 'discard' across a remount"));

  TrimdProcess trimd(sandbox_.args(), sandbox_.log_path("xfs"));
  ASSERT_TRUE(wait_until(
      [&] { return state_string(sandbox_.state_file(), mnt, "mount_point").has_value(); }, 15s))
      << trimd.log();
  trimd.send(SIGTERM);
  EXPECT_EQ(trimd.wait_for_exit(10s), 0) << trimd.log();
  EXPECT_FALSE(state_int(mnt, "taken_over_usec"));
  const auto after = mount_entry_at(mnt);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->super_options, before->super_options);
}

INSTANTIATE_TEST_SUITE_P(Xfs, XfsTakeover, ::testing::Values(Fs::Xfs), name_of);

}  // namespace
}  // namespace trimd::test
