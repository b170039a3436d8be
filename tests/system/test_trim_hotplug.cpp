// Acceptance: the daemon follows filesystems that come and go while it runs.
// It needs no udevd (there is none on the test machines): changes of
// /proc/self/mountinfo alone must be enough.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "loopfs.hpp"
#include "trimd_process.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kNoticesWithin = 15s;  // idle window + rescan, generously
constexpr auto kPassWithin = 60s;
constexpr auto kStopsWithin = 5s;

// Every filesystem of the machine is left alone but those of this test:
// a daemon trims whatever is due, and the host's own must not be.
std::string daemon_config(const std::vector<std::string>& fast, const std::string& slow) {
  std::string toml = R"([idle]
window = "1s"
sample_interval = "200ms"

[trim]
enabled = false
first_delay = "0s"
randomized_delay = "0s"
chunk_size = "16MiB"
pause = "200ms"
)";
  for (const auto& mount_point : fast)
    toml += "\n[[filesystem]]\nmatch = \"" + mount_point + "\"\nenabled = true\n";
  if (!slow.empty())
    toml += "\n[[filesystem]]\nmatch = \"" + slow +
            "\"\nenabled = true\nchunk_size = \"8MiB\"\n"
            "pause = \"300ms\"\n";
  return toml;
}

class TrimHotplug : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
  }

  static LoopImage mounted_ext4(std::uint64_t size_mib) {
    LoopImage image = LoopImage::create(size_mib);
    image.mkfs(Fs::Ext4, kExt4SmallGroups);
    image.mount(kNoDiscard);
    return image;
  }

  // Still alive, and it stops cleanly when told to.
  static void expect_clean_stop(TrimdProcess& trimd) {
    EXPECT_TRUE(trimd.running()) << trimd.log();
    trimd.send(SIGTERM);
    EXPECT_EQ(trimd.wait_for_exit(kStopsWithin), 0) << trimd.log();
  }

  TrimdSandbox sandbox_;
};

TEST_F(TrimHotplug, TrimsAFilesystemMountedWhileItRuns) {
  LoopImage fresh = LoopImage::create(256);
  fresh.detach();  // attached again once trimd runs
  const std::string& mnt = fresh.mount_point();
  sandbox_.write_config(daemon_config({mnt}, ""));
  TrimdProcess trimd(sandbox_.args(), sandbox_.log_path("trimd"));
  ASSERT_TRUE(trimd.wait_for_event(EventId::DaemonStarted, "", 10s)) << trimd.log();

  fresh.attach();
  fresh.mkfs(Fs::Ext4);
  fresh.mount(kNoDiscard);
  const DiscardCounters before = discard_counters(fresh.loop_name());
  EXPECT_TRUE(trimd.wait_for_event(EventId::PassStarted, mnt, kNoticesWithin)) << trimd.log();
  EXPECT_TRUE(trimd.wait_for_event(EventId::PassFinished, mnt, kPassWithin)) << trimd.log();
  EXPECT_TRUE(pass_success(trimd, mnt)) << trimd.log();
  EXPECT_GT(discard_counters(fresh.loop_name()).completed, before.completed);
  expect_clean_stop(trimd);
}

TEST_F(TrimHotplug, SurvivesAnUnmountAndADetachInTheMiddleOfAPass) {
  LoopImage doomed = mounted_ext4(512);  // 64 chunks of 8 MiB, 300 ms apart
  LoopImage other = mounted_ext4(256);   // 16 chunks of 16 MiB, 200 ms apart
  const std::string doomed_mnt = doomed.mount_point();
  const std::string& other_mnt = other.mount_point();
  sandbox_.write_config(daemon_config({other_mnt}, doomed_mnt));
  TrimdProcess trimd(sandbox_.args(), sandbox_.log_path("trimd"));
  ASSERT_TRUE(trimd.wait_for_event(EventId::ChunkStarted, doomed_mnt, kNoticesWithin, 3))
      << trimd.log();
  ASSERT_FALSE(pass_success(trimd, other_mnt)) << "too late to show the other pass unaffected";

  const auto unmount_start = Clock::now();
  doomed.unmount();
  EXPECT_LT(Clock::now() - unmount_start, 4s) << "trimd kept the mount point busy";
  EXPECT_TRUE(trimd.wait_for_event(EventId::FilesystemGone, doomed_mnt, kNoticesWithin))
      << trimd.log();
  const std::size_t doomed_chunks = chunk_lines(trimd, doomed_mnt).size();
  doomed.detach();

  EXPECT_TRUE(trimd.wait_for_event(EventId::PassFinished, other_mnt, kPassWithin)) << trimd.log();
  EXPECT_TRUE(pass_success(trimd, other_mnt)) << trimd.log();
  EXPECT_EQ(chunk_lines(trimd, doomed_mnt).size(), doomed_chunks) << "trimmed an unmounted path";
  EXPECT_FALSE(pass_success(trimd, doomed_mnt)) << trimd.log();

  other.detach();
  EXPECT_TRUE(trimd.wait_for_event(EventId::FilesystemGone, other_mnt, kNoticesWithin))
      << trimd.log();
  expect_clean_stop(trimd);
}

}  // namespace
}  // namespace trimd::test
