// How long trimd can keep a filesystem busy (issue 8, F9): a FITRIM runner
// has the mount point open, so umount says "target is busy" while a chunk is
// in the kernel. Every chunk has a time limit (twice chunk_time); past it the
// runner is killed and the filesystem is left alone for a moment. Here one
// chunk would take about 12 s on the slow-TRIM device: an umount retried
// every 50 ms must get through within the limit plus a margin, and trimd must
// carry on without the filesystem. Read from /proc and the process's exit.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>

#include <cerrno>
#include <chrono>
#include <iostream>
#include <optional>
#include <thread>

#include "proc_probe.hpp"
#include "slow_device_helpers.hpp"
#include "slowtrim_mount.hpp"
#include "trimd_process.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// 4000 free extents of 8 KiB at 3 ms per discard: about 12 s for one call
// over the whole filesystem, the first chunk's size.
constexpr int kDiscardMs = 3;
// chunk_time 1 s: the time limit is 2 s.
constexpr auto kTimeLimit = 2s;
// Generous: the runner leaves FITRIM within a discard of SIGKILL, the limit
// is checked every 200 ms, and umount is retried every 50 ms.
constexpr auto kMargin = 3s;

class UnmountBound : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    TRIMD_SKIP_OR_FAIL_IF(missing_slowtrim());
  }

  void write_config(const std::string& mount_point) {
    sandbox_.write_config(
        "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\npreempt_interval = \"0s\"\n\n"
        "[trim]\nfirst_delay = \"0s\"\nrandomized_delay = \"0s\"\nchunk_time = \"1s\"\n"
        "chunk_size = \"" +
        std::to_string(kSlowImageMib) +
        "MiB\"\npause = \"20ms\"\n\n"
        "[[filesystem]]\nmatch = \"*\"\nenabled = false\n\n"
        "[[filesystem]]\nmatch = \"" +
        mount_point + "\"\nenabled = true\n");
  }

  // umount every 50 ms until it works: how long that took, or nothing.
  static std::optional<Steady::duration> umount_retrying(const std::string& mount_point,
                                                         Steady::duration timeout) {
    const auto start = Steady::now();
    while (Steady::now() - start < timeout) {
      if (::umount2(mount_point.c_str(), 0) == 0) return Steady::now() - start;
      if (errno != EBUSY) return std::nullopt;
      std::this_thread::sleep_for(50ms);
    }
    return std::nullopt;
  }

  TrimdSandbox sandbox_;
};

TEST_F(UnmountBound, UmountSucceedsWithinTheChunkTimeLimitWhileAPassRuns) {
  FragmentedImage original = fragmented_image(Fs::Ext4, kSlowImageMib, kSlowFiles, kSlowFileBytes);
  original.image.detach();
  SlowTrimMount slow(original.image, Fs::Ext4, kDiscardMs);
  write_config(slow.mount_point());
  TrimdProcess trimd(sandbox_.args({"--foreground"}), sandbox_.log_path("trimd"));
  ASSERT_TRUE(runner_in_fitrim(
      trimd.pid(), [](const FitrimCall&) { return true; }, 60s))
      << "no chunk was seen in FITRIM\n"
      << trimd.log();

  const auto took = umount_retrying(slow.mount_point(), 60s);
  ASSERT_TRUE(took) << "umount did not succeed in 60 s\n" << trimd.log();
  const double ms = std::chrono::duration<double, std::milli>(*took).count();
  std::cout << "[unmount] umount retried every 50 ms succeeded after " << ms << " ms (time limit "
            << kTimeLimit.count() << " s)" << std::endl;
  RecordProperty("umount_ms", std::to_string(ms));
  EXPECT_LE(*took, kTimeLimit + kMargin);

  // The filesystem vanished mid-pass: trimd notices, its runner is gone,
  // and it carries on, then stops cleanly.
  EXPECT_TRUE(trimd.wait_for_event(EventId::FilesystemGone, slow.mount_point(), 30s))
      << trimd.log();
  EXPECT_TRUE(wait_until([&] { return children_of(trimd.pid()).empty(); }, 10s))
      << "a runner is still at work";
  ASSERT_TRUE(trimd.running()) << trimd.log();
  trimd.send(SIGTERM);
  EXPECT_EQ(trimd.wait_for_exit(10s), 0) << trimd.log();
}

}  // namespace
}  // namespace trimd::test
