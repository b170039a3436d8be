#include "preemption.hpp"

#include <gtest/gtest.h>

namespace trimd {
namespace {

constexpr std::uint64_t KiB = 1024;

struct Disk {
  DiskCounters c;
  void read(std::uint64_t ops, std::uint64_t bytes) {
    c.reads_completed += ops;
    c.sectors_read += bytes / kDiskstatsSectorBytes;
  }
  void write(std::uint64_t ops, std::uint64_t bytes) {
    c.writes_completed += ops;
    c.sectors_written += bytes / kDiskstatsSectorBytes;
  }
  void discard(std::uint64_t bytes) {
    c.discards_completed += 1;
    c.sectors_discarded += bytes / kDiskstatsSectorBytes;
    c.in_flight = 1;
  }
  std::vector<DiskStat> sample() const { return {DiskStat{7, 0, "loop0", c}}; }
};

class Preemption : public ::testing::Test {
 protected:
  Disk disk;
  IoBytes runner;
  std::optional<PreemptionWatch> watch;
  void start(std::uint64_t allowance = 0, Duration tolerated = Duration{0}) {
    watch.emplace(std::vector<std::string>{"loop0"}, disk.sample(), runner, allowance, tolerated);
  }
  PreemptDecision decide() { return watch->observe(disk.sample(), runner); }
};

TEST_F(Preemption, TheRunnersOwnBitmapReadsAloneNeverPreempt) {
  runner = {4096, 0};  // what an earlier chunk read
  start();
  for (int i = 0; i < 50; ++i) {
    runner.read += 4 * KiB;  // submitted: charged to the runner at once
    EXPECT_FALSE(decide().preempt()) << "a read in flight is not foreground";
    disk.read(1, 4 * KiB);  // completed: in diskstats now
    disk.discard(1 << 20);
    EXPECT_FALSE(decide().preempt());
  }
}

TEST_F(Preemption, OneForegroundWritePreempts) {
  start();
  runner.read += 64 * KiB;
  disk.read(16, 64 * KiB);
  disk.write(1, 4 * KiB);
  const PreemptDecision d = decide();
  EXPECT_TRUE(d.preempt());
  EXPECT_EQ(d.reason, PreemptReason::ForegroundWrite);
  EXPECT_EQ(d.disk, "loop0");
  EXPECT_EQ(d.foreground_bytes, 4 * KiB);
}

TEST_F(Preemption, AForegroundReadBeyondTheRunnersOwnPreempts) {
  start();
  runner.read += 8 * KiB;
  disk.read(3, 12 * KiB);
  EXPECT_EQ(decide().reason, PreemptReason::ForegroundRead);
}

TEST_F(Preemption, ReadsInsideTheAllowanceAreTakenForTheFilesystemsWorkers) {
  start(256 * KiB);  // btrfs: free-space cache read by a kernel worker
  disk.read(6, 96 * KiB);
  EXPECT_FALSE(decide().preempt());
  disk.write(1, 4 * KiB);
  EXPECT_TRUE(decide().preempt()) << "writes are never covered by the allowance";
}

TEST(UnattributedReadAllowance, GrowsWithABtrfsChunkBetweenItsBounds) {
  constexpr std::uint64_t MiB = 1024 * 1024;
  EXPECT_EQ(unattributed_read_allowance("btrfs", 16 * MiB), 256 * 1024);
  EXPECT_EQ(unattributed_read_allowance("btrfs", 960 * MiB), 960 * 1024);
  EXPECT_EQ(unattributed_read_allowance("btrfs", ~0ull), MiB) << "an open-ended tail chunk";
  EXPECT_EQ(unattributed_read_allowance("ext4", 960 * MiB), 128 * 1024);
  EXPECT_EQ(unattributed_read_allowance("xfs", 960 * MiB), 0u);
}

TEST_F(Preemption, DiscardsNeverPreempt) {
  start();
  disk.discard(64 << 20);
  disk.discard(64 << 20);
  EXPECT_FALSE(decide().preempt());
}

TEST(ForegroundIo, TakesTheRunnersBytesAndItsShareOfOperationsOut) {
  DiskCounters before;
  DiskCounters after;
  after.reads_completed = 10;
  after.sectors_read = 80;  // 40 KiB
  after.writes_completed = 2;
  after.sectors_written = 16;
  const ForegroundIo io = foreground_io(before, after, IoBytes{30 * KiB, 0});
  EXPECT_EQ(io.read_bytes, 10 * KiB);
  EXPECT_DOUBLE_EQ(io.read_ops, 2.5);
  EXPECT_EQ(io.write_bytes, 8 * KiB);
  EXPECT_DOUBLE_EQ(io.write_ops, 2.0);
}

TEST(ForegroundIo, CountersThatWentBackCountAsNothing) {
  DiskCounters before;
  before.sectors_read = 100;
  const ForegroundIo io = foreground_io(before, DiskCounters{}, IoBytes{});
  EXPECT_FALSE(io.any());
}

// A disk that queues its discards: reads and writes that do not wait for
// the chunk leave it running; once they wait longer, it gives way.
TEST_F(Preemption, OnAQueuedDiskForegroundThatDoesNotWaitLeavesTheChunkRunning) {
  start(0, kQueuedPreemptLatency);
  for (int i = 0; i < 20; ++i) {
    disk.read(20, 80 * KiB);
    disk.c.ms_reading += 2;  // 0.1 ms each
    EXPECT_FALSE(decide().preempt()) << "sample " << i;
  }
}

TEST_F(Preemption, OnAQueuedDiskForegroundThatWaitsPreemptsAndSaysHowLong) {
  start(0, kQueuedPreemptLatency);
  disk.read(20, 80 * KiB);
  disk.c.ms_reading += 2;
  EXPECT_FALSE(decide().preempt());
  disk.write(4, 16 * KiB);
  disk.c.ms_writing += 26;  // 6.5 ms each: the chunk's discards are in its way
  const PreemptDecision d = decide();
  ASSERT_TRUE(d.preempt());
  EXPECT_EQ(d.mean_latency, std::chrono::microseconds{6500});
}

TEST_F(Preemption, ASampleWithNoCompletedIoNeitherPreemptsNorForgetsTheLastOne) {
  start(0, kQueuedPreemptLatency);
  EXPECT_FALSE(decide().preempt());
  disk.read(2, 8 * KiB);
  disk.c.ms_reading += 40;
  EXPECT_TRUE(decide().preempt());
}

}  // namespace
}  // namespace trimd
