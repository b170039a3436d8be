// Acceptance for preemptible trimming (issue 7), on the slow-TRIM device
// where one discard takes 2 ms and stalls other I/O: a FITRIM runner is a
// process that dies within about one discard of SIGKILL, a writer arriving
// mid-chunk makes trimd kill its runner, SIGTERM does too, and nothing is
// lost: the cursor stays at the killed chunk's start and the pass reclaims
// what fstrim does. Read from /proc, /proc/diskstats and the state file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "diskstats.hpp"
#include "loopfs.hpp"
#include "proc_probe.hpp"
#include "run_one_chunk.hpp"
#include "runner_process.hpp"
#include "slow_device_helpers.hpp"
#include "slowtrim_mount.hpp"
#include "trimd_process.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

double ms_since(Steady::time_point t0) {
  return std::chrono::duration<double, std::milli>(Steady::now() - t0).count();
}

std::vector<DiskStat> all_diskstats() {
  std::ifstream in("/proc/diskstats");
  std::stringstream text;
  text << in.rdbuf();
  return parse_diskstats(text.str());
}

DiskCounters counters_of(const std::string& disk) {
  for (const DiskStat& stat : all_diskstats())
    if (stat.name == disk) return stat.counters;
  throw std::runtime_error(disk + " is not in /proc/diskstats");
}

bool wait_exit(const RunnerProcess& runner, std::chrono::milliseconds timeout) {
  pollfd pfd{runner.pidfd(), POLLIN, 0};
  return ::poll(&pfd, 1, static_cast<int>(timeout.count())) == 1;
}

class FitrimRunner : public ::testing::TestWithParam<Fs> {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(GetParam())));
  }
};

// The fact preemption is built on: the kernel checks for a fatal signal
// between free extents, so a killed runner leaves FITRIM within about one
// discard. A thread could not be stopped at all.
TEST_P(FitrimRunner, ExitsSoonAfterSigkillInTheMiddleOfAFitrim) {
  TRIMD_SKIP_OR_FAIL_IF(missing_slowtrim());
  FragmentedImage original =
      fragmented_image(GetParam(), kSlowImageMib, kSlowFiles, kSlowFileBytes);
  original.image.detach();
  SlowTrimMount slow(original.image, GetParam());
  const std::uint64_t before = counters_of(slow.loop_name()).discards_completed;
  RunnerProcess runner(TrimTarget{slow.mount_point(), slow.mounted_dev()}, TrimRange{0, ~0ull, 0});
  ASSERT_TRUE(wait_until(
      [&] { return counters_of(slow.loop_name()).discards_completed >= before + 100; }, 30s))
      << "the runner sent no discards";
  // Polled: a runner busy on a CPU inside btrfs's trim reads as "running".
  ASSERT_TRUE(wait_until([&] { return fitrim_in_flight(runner.pid()).has_value(); }, 5s))
      << "the runner is not inside FITRIM";

  const auto killed_at = Steady::now();
  runner.kill();
  ASSERT_TRUE(wait_exit(runner, 10s)) << "the runner outlived SIGKILL by 10 s";
  const double ms = ms_since(killed_at);
  const RunnerProcess::Exit exit = runner.reap();
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_FALSE(exit.raw) << "FITRIM completed: the kill came too late to mean anything";
  std::cout << "[preempt] " << fs_name(GetParam()) << ": runner exited " << ms
            << " ms after SIGKILL mid-FITRIM" << std::endl;
  RecordProperty("kill_to_exit_ms", std::to_string(ms));
  EXPECT_LT(ms, 500.0);
}

// What FITRIM reads (ext4 block bitmaps, xfs free-space btree blocks, btrfs
// free-space cache) is charged to the runner's read_bytes: taking that out
// of the disk's read sectors leaves nothing that looks like foreground I/O.
TEST_P(FitrimRunner, ItsOwnReadsAreAllChargedToIt) {
  FragmentedImage fs = fragmented_image(GetParam(), kSlowImageMib, 2000, 64 * 1024);
  fs.image.unmount();
  fs.image.mount(kNoDiscard);  // cold caches: the free-space metadata must be read
  // udev probes a device after mkfs writes it (blkid reads): done before the
  // count starts, or its reads look like the runner's (a flake under load).
  run_command({"udevadm", "settle", "--timeout=30"});
  const DiskCounters before = counters_of(fs.image.loop_name());
  RunnerProcess runner(TrimTarget{fs.image.mount_point(), fs.image.mounted_dev()},
                       TrimRange{0, ~0ull, 0});
  ASSERT_TRUE(wait_exit(runner, 60s));
  const std::optional<IoBytes> own = runner.io();  // a zombie still tells
  const RunnerProcess::Exit exit = runner.reap();
  const DiskCounters after = counters_of(fs.image.loop_name());
  ASSERT_TRUE(own);
  ASSERT_TRUE(exit.raw && exit.raw->step == RawTrim::Done) << "FITRIM failed";
  const std::uint64_t disk_read = (after.sectors_read - before.sectors_read) * 512;
  const std::uint64_t disk_written = (after.sectors_written - before.sectors_written) * 512;
  std::cout << "[preempt] " << fs_name(GetParam()) << ": FITRIM over " << fs.deleted / 1024
            << " KiB freed: disk read " << disk_read << " B in "
            << after.reads_completed - before.reads_completed << " reads, wrote " << disk_written
            << " B; runner read_bytes " << own->read << ", write_bytes " << own->write << std::endl;
  RecordProperty("disk_read_bytes", std::to_string(disk_read));
  RecordProperty("runner_read_bytes", std::to_string(own->read));
  // btrfs reads its free-space cache in a kernel worker: within the allowance.
  const std::uint64_t allowance = unattributed_read_allowance(fs_name(GetParam()));
  EXPECT_LE(disk_read, own->read + allowance) << "reads the runner was not charged for";
}

// The idleness model is handed the same allowance for the kernel worker's
// reads as the preemption watch: else btrfs's cold block-group caching, done
// by no process of trimd's, made the disk look busy right after a chunk and
// paused an idle pass for a whole idle window (W3 on the thin model).
TEST_P(FitrimRunner, ItsKernelWorkersReadsAreHandedToTheIdlenessModel) {
  FragmentedImage fs = fragmented_image(GetParam(), kSlowImageMib, 2000, 64 * 1024);
  fs.image.unmount();
  fs.image.mount(kNoDiscard);  // cold caches, as above
  run_command({"udevadm", "settle", "--timeout=30"});
  const DiskCounters before = counters_of(fs.image.loop_name());
  ChunkJob job;
  job.serial = 1;
  job.fs_id = "test";
  job.target = TrimTarget{fs.image.mount_point(), fs.image.mounted_dev()};
  job.fs_type = fs_name(GetParam());
  job.range = TrimRange{0, ~0ull, 0};
  job.disks = job.devices = {fs.image.loop_name()};
  job.time_limit = 60s;
  const OneChunkRun run = run_one_chunk(all_diskstats, job, 90s);
  const std::optional<ChunkReport>& report = run.report;
  ASSERT_TRUE(report) << "the chunk did not end within 90 s";
  ASSERT_EQ(report->end, ChunkEnd::Finished);
  const DiskCounters after = counters_of(fs.image.loop_name());
  const std::uint64_t disk_read = (after.sectors_read - before.sectors_read) * 512;
  const auto own = run.own_io.find(fs.image.loop_name());
  const IoBytes handed = own == run.own_io.end() ? IoBytes{} : own->second;
  EXPECT_LE(disk_read, handed.read) << "reads the idleness model would take for foreground";
  EXPECT_GE(handed.read, unattributed_read_allowance(job.fs_type, job.range.len));
}

INSTANTIATE_TEST_SUITE_P(RealFilesystems, FitrimRunner,
                         ::testing::Values(Fs::Ext4, Fs::Xfs, Fs::Btrfs),
                         [](const auto& test_param) {
                           return std::string(fs_name(test_param.param));
                         });

class PreemptibleTrim : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    TRIMD_SKIP_OR_FAIL_IF(missing_slowtrim());
  }

  // A daemon that trims only `mount_point`, at once, in fixed chunks.
  void write_config(const std::string& mount_point, const std::string& chunk_size) {
    sandbox_.write_config(
        "[idle]\nwindow = \"1s\"\nsample_interval = \"200ms\"\npreempt_interval = \"20ms\"\n\n"
        "[trim]\nfirst_delay = \"0s\"\nrandomized_delay = \"0s\"\nchunk_time = \"0s\"\n"
        "chunk_size = \"" +
        chunk_size +
        "\"\npause = \"0s\"\n\n"
        "[[filesystem]]\nmatch = \"*\"\nenabled = false\n\n"
        "[[filesystem]]\nmatch = \"" +
        mount_point + "\"\nenabled = true\n");
  }

  // The first runner of `trimd` found inside a FITRIM that starts past 0.
  static std::optional<std::pair<pid_t, FitrimCall>> runner_past_start(pid_t trimd) {
    return runner_in_fitrim(
        trimd, [](const FitrimCall& call) { return call.start > 0; }, 60s);
  }

  TrimdSandbox sandbox_;
};

TEST_F(PreemptibleTrim, SigtermMidChunkExitsAtOnceWithTheCursorAtTheChunkStart) {
  FragmentedImage original =
      fragmented_image(Fs::Ext4, kSlowImageMib, kSlowFiles, kSlowFileBytes, kExt4SmallGroups);
  original.image.detach();
  SlowTrimMount slow(original.image, Fs::Ext4);
  write_config(slow.mount_point(), "16MiB");
  TrimdProcess trimd(sandbox_.args({"--foreground"}), sandbox_.log_path("trimd"));
  const auto runner = runner_past_start(trimd.pid());
  ASSERT_TRUE(runner) << "no chunk past the first one was seen in FITRIM\n" << trimd.log();

  const auto signalled = Steady::now();
  trimd.send(SIGTERM);
  const std::optional<int> code = trimd.wait_for_exit(10s);
  const double ms = ms_since(signalled);
  ASSERT_EQ(code, 0) << trimd.log();
  std::cout << "[preempt] SIGTERM mid-chunk: trimd exited after " << ms << " ms" << std::endl;
  RecordProperty("sigterm_to_exit_ms", std::to_string(ms));
  EXPECT_LT(ms, 1000.0);
  EXPECT_FALSE(process_exists(runner->first)) << "the runner outlived trimd";
  EXPECT_EQ(state_cursor(sandbox_.state_file(), slow.mount_point()), runner->second.start)
      << "the saved cursor is not the start of the killed chunk\n"
      << trimd.log();
}

TEST_F(PreemptibleTrim, AWriterMidChunkKillsTheRunnerAndThePassStillReclaimsAll) {
  Twins twins =
      fragmented_twins(Fs::Ext4, kSlowImageMib, kSlowFiles, kSlowFileBytes, kExt4SmallGroups);
  twins.first.mount(kNoDiscard);
  ASSERT_TRUE(run_command({"fstrim", twins.first.mount_point()}).ok());
  twins.first.unmount();

  std::optional<SlowTrimMount> slow(std::in_place, twins.second, Fs::Ext4);
  const std::string mnt = slow->mount_point();
  write_config(mnt, "64MiB");
  TrimdProcess trimd(sandbox_.args({"--foreground"}), sandbox_.log_path("trimd"));
  const auto runner = runner_past_start(trimd.pid());
  ASSERT_TRUE(runner) << trimd.log();

  // trimd's decisions to hold the pass for busy disks, so far.
  const auto holds = [&] {
    return trimd.events(EventId::PassPaused, mnt).size() +
           trimd.events(EventId::WaitingForIdle, mnt).size();
  };
  const std::size_t holds_before = holds();
  const auto write_started = Steady::now();
  std::optional<ForegroundWriter> writer(std::in_place, mnt + "/foreground");
  ASSERT_TRUE(wait_until([&] { return !process_exists(runner->first); }, 10s))
      << "the runner kept trimming under foreground writes";
  const double reaction_ms = ms_since(write_started);
  std::cout << "[preempt] writer started mid-chunk: runner gone after " << reaction_ms << " ms"
            << std::endl;
  RecordProperty("writer_to_runner_exit_ms", std::to_string(reaction_ms));
  EXPECT_LT(reaction_ms, 2000.0);

  // While the writer runs, trimd holds the pass instead of starting a chunk.
  EXPECT_TRUE(wait_until([&] { return holds() > holds_before; }, 10s, 50ms))
      << "trimd did not say it waits for the busy disk\n"
      << trimd.log();
  EXPECT_TRUE(children_of(trimd.pid()).empty()) << "a chunk started while the writer was writing";
  EXPECT_GT(writer->writes(), 0u);
  const std::size_t fds_between_chunks = open_fds(trimd.pid());
  writer.reset();
  ::unlink((mnt + "/foreground").c_str());

  ASSERT_TRUE(wait_until([&] { return state_last_result(sandbox_.state_file(), mnt) == "success"; },
                         180s, 100ms))
      << "the pass did not finish\n"
      << trimd.log();
  EXPECT_TRUE(wait_until([&] { return children_of(trimd.pid()).empty(); }, 2s))
      << "runners (or zombies) left after the pass";
  EXPECT_EQ(open_fds(trimd.pid()), fds_between_chunks) << "file descriptors leaked";
  trimd.send(SIGTERM);
  ASSERT_EQ(trimd.wait_for_exit(10s), 0) << trimd.log();
  slow.reset();

  const std::uint64_t tolerance = twin_tolerance(twins.first.allocated_bytes());
  std::cout << "[preempt] allocated after fstrim " << mib(twins.first.allocated_bytes())
            << " MiB, after trimd with preemption " << mib(twins.second.allocated_bytes()) << " MiB"
            << std::endl;
  EXPECT_LE(twins.second.allocated_bytes(), twins.first.allocated_bytes() + tolerance);
  EXPECT_GE(twins.second.allocated_bytes() + tolerance, twins.first.allocated_bytes());
}

}  // namespace
}  // namespace trimd::test
