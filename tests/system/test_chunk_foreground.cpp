// What foreground I/O on a chunk's disks does to a chunk that is not
// preempted (ChunkJob::on_foreground), through the real ChunkRunner on the
// slow-TRIM device: a gentle chunk is held to its time limit from then on;
// with preemption off ([idle] preempt_interval = 0) nothing happens to it.
// W5 showed why the second matters: trimds on a backend shared with a tenant
// saw its writes, had every long call killed at its limit and redid it whole.
// The foreground is simulated in the runner's samples (writes added to the
// real diskstats), so that its timing cannot race the chunk.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "diskstats.hpp"
#include "run_one_chunk.hpp"
#include "slow_device_helpers.hpp"
#include "slowtrim_mount.hpp"
#include "trimd_process.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

// /proc/diskstats, with `disk` showing a few more writes at every call.
class SamplesWithForegroundWrites {
 public:
  explicit SamplesWithForegroundWrites(std::string disk) : disk_(std::move(disk)) {}
  std::vector<DiskStat> operator()() {
    std::ifstream in("/proc/diskstats");
    std::stringstream text;
    text << in.rdbuf();
    auto stats = parse_diskstats(text.str());
    ++calls_;
    for (DiskStat& stat : stats) {
      if (stat.name != disk_) continue;
      stat.counters.writes_completed += 4 * calls_;
      stat.counters.sectors_written += 32 * calls_;
    }
    return stats;
  }

 private:
  std::string disk_;
  std::uint64_t calls_ = 0;
};

class ForegroundOnAChunk : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    TRIMD_SKIP_OR_FAIL_IF(missing_slowtrim());
  }

  // One whole-filesystem chunk (thousands of 2 ms discards: seconds) with a
  // 1 s time limit, run to its end under simulated foreground writes.
  ChunkEnd run_chunk(OnForeground on_foreground) {
    FragmentedImage fs =
        fragmented_image(Fs::Ext4, kSlowImageMib, kSlowFiles, kSlowFileBytes, kExt4SmallGroups);
    fs.image.detach();
    SlowTrimMount slow(fs.image, Fs::Ext4);
    ChunkJob job;
    job.serial = 1;
    job.fs_id = "test";
    job.target = TrimTarget{slow.mount_point(), slow.mounted_dev()};
    job.fs_type = "ext4";
    job.range = TrimRange{0, ~0ull, 0};
    job.disks = {slow.loop_name()};
    job.devices = {slow.loop_name()};
    job.on_foreground = on_foreground;
    job.time_limit = 1s;
    const OneChunkRun run = run_one_chunk(SamplesWithForegroundWrites(slow.loop_name()), job, 120s);
    const std::optional<ChunkReport>& report = run.report;
    EXPECT_TRUE(report) << "the chunk did not end within 120 s";
    return report ? report->end : ChunkEnd::Died;
  }
};

TEST_F(ForegroundOnAChunk, HoldsAGentleChunkToItsTimeLimit) {
  EXPECT_EQ(run_chunk(OnForeground::HoldToLimit), ChunkEnd::TimedOut);
}

TEST_F(ForegroundOnAChunk, LeavesAChunkAloneWithPreemptionOff) {
  EXPECT_EQ(run_chunk(OnForeground::Ignore), ChunkEnd::Finished);
}

TEST_F(ForegroundOnAChunk, KillsAPreemptibleChunk) {
  EXPECT_EQ(run_chunk(OnForeground::Preempt), ChunkEnd::Preempted);
}

}  // namespace
}  // namespace trimd::test
