// The manager and chunks that do not finish: preempted for foreground I/O,
// killed on request; and pacing on the monotonic clock.
#include "chunk_sizing.hpp"
#include "manager_fixture.hpp"
#include "preemption.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t MiB = 1ull << 20;

}  // namespace

class ManagerPreemption : public ManagerTest {
 protected:
  void SetUp() override { disks["loop0"] = {}; }
  DiscoveredFs fs = make_fs("/mnt/a", "loop0");

  // The one job handed out now.
  ChunkJob first_job(Manager& m) {
    auto jobs = m.take_jobs(now, mono);
    if (jobs.size() != 1) throw std::runtime_error("expected one job");
    return jobs[0];
  }
};

TEST_F(ManagerPreemption, APreemptedChunkIsRetriedFromItsStartAfterTheNextIdleWindow) {
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  const ChunkJob second = first_job(*m);
  EXPECT_EQ(second.on_foreground, OnForeground::Preempt);
  m->chunk_preempted(second, now, mono);

  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, second.range.start);
  EXPECT_TRUE(m->passes_active());
  pass_time(*m, 4);  // quiet, but less than the 5 s idle window since the preemption
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "retried before the disk was idle again";
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Waiting);
  pass_time(*m, 2);
  const ChunkJob retry = first_job(*m);
  EXPECT_EQ(retry.range.start, second.range.start);
  EXPECT_EQ(retry.range.len, second.range.len) << "one preemption does not shrink the chunk";
}

TEST_F(ManagerPreemption, AChunkPreemptedAgainAndAgainHalvesDownToTheMinimum) {
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  std::vector<std::uint64_t> lengths{jobs[0].range.len};
  ChunkJob job = jobs[0];
  for (int i = 0; i < 10; ++i) {
    m->chunk_preempted(job, now, mono);
    pass_time(*m, 6);
    job = first_job(*m);
    EXPECT_EQ(job.range.start, 0u);
    lengths.push_back(job.range.len);
  }
  EXPECT_EQ(lengths[1], GiB) << "the first preemption keeps the length";
  EXPECT_EQ(lengths[2], GiB / 2);
  EXPECT_EQ(lengths[3], GiB / 4);
  EXPECT_EQ(lengths.back(), kMinShrunkChunkBytes);
  // A chunk that then completes lets the next one grow again (at most twofold).
  m->chunk_finished(job, ok(job), now, mono);
  EXPECT_EQ(first_job(*m).range.len, 2 * kMinShrunkChunkBytes);
}

TEST_F(ManagerPreemption, ShrinkingNeverSplitsAnExt4BlockGroup) {
  fs.geometry.group_bytes = 128 * MiB;
  auto m = make();
  ChunkJob job = track_and_start(*m, fs)[0];
  for (int i = 0; i < 8; ++i) {
    m->chunk_preempted(job, now, mono);
    pass_time(*m, 6);
    job = first_job(*m);
  }
  EXPECT_EQ(job.range.len, 128 * MiB);
}

TEST_F(ManagerPreemption, GentleChunksOfAnOverduePassAreNotPreemptible) {
  auto m = make(quick_config(), trimmed_at(fs, now - std::chrono::hours{24 * 30}));
  m->update_filesystems({fs}, now);
  busy.insert("loop0");
  pass_time(*m, 10);
  const ChunkJob job = first_job(*m);
  EXPECT_EQ(job.on_foreground, OnForeground::HoldToLimit)
      << "a disk that is never idle would never be trimmed";
}

TEST_F(ManagerPreemption, TrimNowIgnoringIdlenessIsNotPreemptible) {
  auto m = make();
  m->update_filesystems({fs}, now);
  m->trim_now({fs.id}, true, now);
  EXPECT_EQ(first_job(*m).on_foreground, OnForeground::HoldToLimit);
}

// W5: trimds sharing a backend with a tenant saw its writes, had every long
// chunk cut at its time limit and redid it whole (2.31x the discards).
TEST_F(ManagerPreemption, WithPreemptionOffForegroundIoDoesNotTouchAChunk) {
  Config config = quick_config();
  config.preempt_interval = Duration{0};
  auto m = make(config);
  m->update_filesystems({fs}, now);
  m->trim_now({fs.id}, true, now);
  EXPECT_EQ(first_job(*m).on_foreground, OnForeground::Ignore);
}

// docs/preemption.md, "Queued TRIM": a chunk on disks that queue their
// discards tolerates foreground I/O that does not wait for it.
TEST_F(ManagerPreemption, AChunkOnDisksThatQueueDiscardsToleratesForegroundThatDoesNotWait) {
  DiscoveredFs queued = fs;
  for (auto& disk : queued.topology.disks) disk.discard_queueing = DiscardQueueing::Queued;
  auto m = make();
  auto jobs = track_and_start(*m, queued);
  EXPECT_EQ(jobs[0].tolerated_latency, kQueuedPreemptLatency);
}

TEST_F(ManagerPreemption, AChunkOnAnExclusiveOrUnknownDiskGivesWayToAnyForegroundIo) {
  auto m = make();
  EXPECT_EQ(track_and_start(*m, fs)[0].tolerated_latency, Duration{0}) << "unknown";
  DiscoveredFs exclusive = fs;
  for (auto& disk : exclusive.topology.disks) disk.discard_queueing = DiscardQueueing::Exclusive;
  auto m2 = make();
  EXPECT_EQ(track_and_start(*m2, exclusive)[0].tolerated_latency, Duration{0});
}

TEST_F(ManagerPreemption, PreemptLatencySetByTheAdminAppliesToEveryDisk) {
  Config config = quick_config();
  config.preempt_latency = std::chrono::milliseconds{10};
  auto m = make(config);
  EXPECT_EQ(track_and_start(*m, fs)[0].tolerated_latency, Duration{std::chrono::milliseconds{10}});
  DiscoveredFs queued = fs;
  for (auto& disk : queued.topology.disks) disk.discard_queueing = DiscardQueueing::Queued;
  config.preempt_latency = Duration{0};
  auto m2 = make(config);
  EXPECT_EQ(track_and_start(*m2, queued)[0].tolerated_latency, Duration{0}) << "0: any I/O";
}

TEST_F(ManagerPreemption, PauseAsksForTheChunkInFlightToBeStopped) {
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  EXPECT_TRUE(m->jobs_to_stop().empty());
  m->pause({fs.id}, now);
  EXPECT_EQ(m->jobs_to_stop(), std::vector<std::uint64_t>{jobs[0].serial});
  m->chunk_interrupted(jobs[0], now, mono);
  EXPECT_TRUE(m->jobs_to_stop().empty());
  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, 0u);
  m->resume({fs.id}, now);
  EXPECT_EQ(first_job(*m).range.start, 0u);
}

// The runner trims through a detached copy of the mount, so umount succeeds
// mid-chunk; the device is released only once the runner is dead.
TEST_F(ManagerPreemption, AChunkWhoseFilesystemLeftTheMountTableIsStoppedAtOnce) {
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  const ChunkJob second = first_job(*m);
  m->update_filesystems({}, now);
  EXPECT_EQ(m->jobs_to_stop(), std::vector<std::uint64_t>{second.serial});
  m->chunk_interrupted(second, now, mono);
  EXPECT_TRUE(m->jobs_to_stop().empty());
  EXPECT_TRUE(m->statuses(now).empty());
  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, second.range.start)
      << "the pass resumes at the stopped chunk when the filesystem is back";
}

// Told by the mount table itself, before the rescan that forgets it.
TEST_F(ManagerPreemption, AChunkWhoseMountIsNoLongerInTheMountTableIsStoppedAtOnce) {
  fs.identity.mount_id = 42;
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->mounts_now({1, 42});
  EXPECT_TRUE(m->jobs_to_stop().empty());
  m->mounts_now({1, 43});
  EXPECT_EQ(m->jobs_to_stop(), std::vector<std::uint64_t>{jobs[0].serial});
  m->chunk_interrupted(jobs[0], now, mono);
  EXPECT_TRUE(m->statuses(now).empty());
  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, 0u);
}

TEST_F(ManagerPreemption, CancelThenTrimNowWhileAChunkIsInFlightStartsANewPass) {
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  const ChunkJob second = first_job(*m);
  m->cancel({fs.id}, now);
  EXPECT_EQ(m->jobs_to_stop(), std::vector<std::uint64_t>{second.serial});
  m->trim_now({fs.id}, false, now);
  m->chunk_interrupted(second, now, mono);
  EXPECT_EQ(m->finished_passes().at(fs.id).result, PassResult::Cancelled);
  const ChunkJob fresh = first_job(*m);
  EXPECT_EQ(fresh.range.start, 0u) << "TrimNow after Cancel starts a new pass from the start";
}

TEST_F(ManagerPreemption, StateIsPausedOnlyWhileEverythingIsPaused) {
  disks["loop1"] = {};
  auto other = make_fs("/mnt/b", "loop1");
  auto m = make();
  m->update_filesystems({fs, other}, now);
  m->pause({}, now);
  EXPECT_EQ(m->state(), ManagerState::Paused);
  m->resume({fs.id}, now);
  EXPECT_NE(m->state(), ManagerState::Paused);
  m->pause({fs.id}, now);
  EXPECT_EQ(m->state(), ManagerState::Paused);
}

TEST_F(ManagerPreemption, ThePauseBetweenChunksRunsOnTheMonotonicClockThroughAWallClockJump) {
  Config config = quick_config();
  config.trim.chunk_pause = 10s;
  auto m = make(config);
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  now -= std::chrono::hours{1};  // the wall clock steps back an hour
  pass_time(*m, 6);              // quiet for the idle window again
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "the pause is not over yet";
  pass_time(*m, 5);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u) << "a wall-clock step stalled the pass";
}

TEST_F(ManagerPreemption, ResultsAreTextOnlyAtTheEdges) {
  EXPECT_EQ((PassOutcome{PassResult::Failed, "EIO"}.text()), "failed: EIO");
  EXPECT_EQ(PassOutcome::parse("failed: EIO")->result, PassResult::Failed);
  EXPECT_EQ(PassOutcome::parse("interrupted: unmounted")->detail, "unmounted");
  EXPECT_EQ(PassOutcome::parse("success")->result, PassResult::Success);
  EXPECT_FALSE(PassOutcome::parse(""));
}

// The pass's bytes are what its devices discarded: a killed call's discards
// (told through chunk_discarded) count, and so does the redo's.
TEST_F(ManagerPreemption, APreemptedChunksDiscardsCountTowardsThePassBytes) {
  fs.geometry.size_bytes = 2 * GiB;
  auto m = make();
  ChunkJob job = track_and_start(*m, fs)[0];
  m->chunk_discarded(job, 300);
  m->chunk_preempted(job, now, mono);
  pass_time(*m, 6);
  job = first_job(*m);
  m->chunk_finished(job, ok(job, 1000), now, mono);
  job = first_job(*m);
  m->chunk_finished(job, ok(job, 1000), now, mono);
  ASSERT_FALSE(m->passes_active());
  EXPECT_EQ(m->status(fs.id, now)->last_bytes_trimmed, 300u + 1000u + 1000u);
}

TEST_F(ManagerPreemption, AKilledChunkWhoseDiscardsWereNotMeasuredFallsBackToFitrimsFigure) {
  fs.geometry.size_bytes = 1 * GiB;
  auto m = make();
  ChunkJob job = track_and_start(*m, fs)[0];
  m->chunk_discarded(job, std::nullopt);
  m->chunk_preempted(job, now, mono);
  pass_time(*m, 6);
  job = first_job(*m);
  m->chunk_finished(job, ok(job, 1000), now, mono);
  ASSERT_FALSE(m->passes_active());
  EXPECT_EQ(m->status(fs.id, now)->last_bytes_trimmed, GiB) << "FITRIM reported the whole range";
}

// A partition's discards are counted on the partition, its idleness on the disk.
TEST_F(ManagerPreemption, AJobNamesTheFilesystemsOwnDevicesApartFromItsDisks) {
  BlockDisk partition;
  partition.name = "loop0p2";
  partition.discard_max_bytes = 4 * GiB;
  fs.topology.devices = {partition};
  auto m = make();
  const ChunkJob job = track_and_start(*m, fs)[0];
  EXPECT_EQ(job.devices, std::vector<std::string>{"loop0p2"});
  EXPECT_EQ(job.disks, std::vector<std::string>{"loop0"});
}
