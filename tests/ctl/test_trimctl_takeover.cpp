// trimctl and inline discard: which filesystems it warns about, and the
// takeover and release commands, against the fake trimd on a private bus.
#include "trimctl_fixture.hpp"

using namespace trimctl_test;

namespace {

class TrimctlDiscard : public TrimctlTest {};

FakeFilesystem async_btrfs() {
  FakeFilesystem fs;
  fs.id = "home";
  fs.mount_point = "/home";
  fs.device = "/dev/nvme0n1p3";
  fs.fs_type = "btrfs";
  fs.discard_mode = "async";
  return fs;
}

TEST_F(TrimctlDiscard, DoesNotAdviseAgainstBtrfsAsyncDiscard) {
  fake_->add_filesystem(async_btrfs());
  const auto result = trimctl({"status"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(line_with(result.out, "/home"), "") << result.out;
  EXPECT_EQ(result.out.find("warning: /home"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("warning: /data is mounted with 'discard'"), std::string::npos)
      << result.out;
}

TEST_F(TrimctlDiscard, PrintsTheDiscardModeInJson) {
  fake_->add_filesystem(async_btrfs());
  const auto result = trimctl({"status", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(python_json(result.out, "[f['discard_mode'] for f in doc['filesystems']]"),
            "['sync', 'async', '']");
}

FakeFilesystem taken_over_ext4() {
  FakeFilesystem fs;
  fs.id = "srv";
  fs.mount_point = "/srv";
  fs.device = "/dev/sdc1";
  fs.fs_type = "ext4";
  fs.takeover = "taken-over";
  fs.taken_over_since = realtime_usec() - 3600 * kUsecPerSecond;
  return fs;
}

TEST_F(TrimctlDiscard, SaysWhichFilesystemTrimdTookOverAndHowToGiveItBack) {
  fake_->add_filesystem(taken_over_ext4());
  const auto result = trimctl({"status"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string note = line_with(result.out, "/srv: inline discard taken over by trimd since ");
  EXPECT_NE(note, "") << result.out;
  EXPECT_NE(note.find("'trimctl release /srv' gives it back"), std::string::npos) << note;
  EXPECT_EQ(result.out.find("warning: /srv"), std::string::npos) << result.out;
}

TEST_F(TrimctlDiscard, ReportsATakeoverThatIsNotPossibleInsteadOfAdvisingARemount) {
  auto fs = sample_filesystems();
  fs[1].takeover = "not-possible";
  fs[1].takeover_reason = "xfs keeps 'discard' across a remount";
  start_fake(Pacing::Immediate, fs);
  const auto result = trimctl({"status"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("/data: mounted with 'discard', not taken over: xfs keeps 'discard' "
                            "across a remount"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("warning: /data"), std::string::npos) << result.out;
}

TEST_F(TrimctlDiscard, PrintsTheTakeoverInJson) {
  fake_->add_filesystem(taken_over_ext4());
  const auto result = trimctl({"status", "--json", "/srv"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(python_json(result.out, "doc['filesystems'][0]['takeover']"), "taken-over");
  EXPECT_EQ(python_json(result.out, "doc['filesystems'][0]['taken_over_since_usec'] > 0"), "True");
}

TEST_F(TrimctlDiscard, TakeoverAndReleaseSendAbsoluteMountPoints) {
  ASSERT_EQ(trimctl({"takeover", "/data/", "/mnt/../mnt/fast"}).exit_code, 0);
  ASSERT_EQ(trimctl({"release", "/data"}).exit_code, 0);
  const auto calls = fake_->calls();
  ASSERT_EQ(calls.take_over.size(), 1u);
  EXPECT_EQ(calls.take_over[0], (std::vector<std::string>{"/data", "/mnt/fast"}));
  ASSERT_EQ(calls.hand_back.size(), 1u);
  EXPECT_EQ(calls.hand_back[0], std::vector<std::string>{"/data"});
}

TEST_F(TrimctlDiscard, TakeoverAndReleaseNeedAMountPoint) {
  for (const char* command : {"takeover", "release"}) {
    const auto result = trimctl({command});
    EXPECT_EQ(result.exit_code, 2) << command;
    EXPECT_NE(result.err.find(std::string("usage: trimctl ") + command + " MOUNT..."),
              std::string::npos)
        << result.err;
  }
  EXPECT_TRUE(fake_->calls().take_over.empty());
}

}  // namespace
