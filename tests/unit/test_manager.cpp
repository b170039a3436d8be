// The manager's trimming loop: when chunks go out, how big, what results mean.
#include "manager_fixture.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;

TEST_F(ManagerTest, ADueFilesystemIsTrimmedInChunksUntilThePassCompletes) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);

  EXPECT_EQ(run_to_completion(*m), 10);  // 10 GiB in 1 GiB chunks
  auto status = m->status(make_fs("/mnt/a", "loop0").id, now);
  ASSERT_TRUE(status);
  EXPECT_EQ(outcome_text(status->last_result), "success");
  EXPECT_EQ(status->last_bytes_trimmed, 10u * 1000u);
  EXPECT_DOUBLE_EQ(status->progress, 1.0);
  EXPECT_EQ(status->state, FsState::Scheduled);
  ASSERT_TRUE(status->next_trim);
  EXPECT_GE(*status->next_trim, now + std::chrono::hours{24 * 7} - 1s);
  EXPECT_FALSE(m->persistent_state().at(status->id).cursor);
}

TEST_F(ManagerTest, NoChunkStartsUntilTheDisksHaveBeenQuietForTheIdleWindow) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  busy.insert("loop0");
  pass_time(*m, 20);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->statuses(now)[0].state, FsState::Waiting);

  busy.clear();
  pass_time(*m, 3);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "quiet for less than the idle window";
  pass_time(*m, 3);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerTest, ForegroundIoBetweenChunksStopsThePassUntilIdleAgain) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);

  busy.insert("loop0");
  pass_time(*m, 1);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  busy.clear();
  pass_time(*m, 6);
  jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.start, GiB) << "continues where it stopped";
}

TEST_F(ManagerTest, AnUnfinishedPassResumesFromThePersistedCursor) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  StateMap state;
  state[fs.id].cursor = 6 * GiB;
  state[fs.id].pass_start = now - 1h;
  auto m = make(quick_config(), state);
  auto jobs = track_and_start(*m, fs);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.start, 6 * GiB);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  EXPECT_EQ(run_to_completion(*m), 3);
}

TEST_F(ManagerTest, ProgressIsPersistedAfterEveryChunk) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->mark_state_saved();
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  EXPECT_TRUE(m->state_dirty());
  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, GiB);
}

TEST_F(ManagerTest, TwoFilesystemsOnOneDiskNeverTrimAtTheSameTime) {
  disks["sda"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/a", "sda"), make_fs("/b", "sda")}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "the disk is still busy with the first chunk";
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerTest, FilesystemsOnDifferentDisksAreTrimmedInParallel) {
  disks["sda"] = {};
  disks["sdb"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/a", "sda"), make_fs("/b", "sdb")}, now);
  pass_time(*m, 6);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 2u);
}

TEST_F(ManagerTest, AFilesystemWithoutFitrimIsMarkedUnsupportedAndNotTriedAgain) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], failed(TrimStatus::Unsupported), now, mono);
  advance(std::chrono::hours{24 * 30});
  sample(*m);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Unsupported);
  EXPECT_THROW(m->trim_now({fs.id}, true, now), ManagerError);
}

TEST_F(ManagerTest, RangePastTheEndCompletesThePass) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], failed(TrimStatus::PastEnd), now, mono);
  EXPECT_EQ(outcome_text(m->status(fs.id, now)->last_result), "success");
}

TEST_F(ManagerTest, AVanishedFilesystemKeepsItsCursorForWhenItReturns) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  jobs = m->take_jobs(now, mono);
  m->update_filesystems({}, now);  // unmounted while the chunk runs
  m->chunk_finished(jobs[0], failed(TrimStatus::Gone), now, mono);
  EXPECT_TRUE(m->statuses(now).empty());
  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, GiB);

  m->update_filesystems({fs}, now);
  jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.start, GiB);
}

TEST_F(ManagerTest, AFailedChunkFailsThePassAndRetriesWithinTheHour) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], failed(TrimStatus::Error), now, mono);
  auto status = m->status(fs.id, now);
  EXPECT_EQ(status->state, FsState::Error);
  EXPECT_EQ(outcome_text(status->last_result), "failed: simulated");
  ASSERT_TRUE(status->next_trim);
  EXPECT_LE(*status->next_trim, now + 1h);
}

TEST_F(ManagerTest, AnOverdueFilesystemIsTrimmedGentlyWhileItsDisksStayBusy) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make(quick_config(), trimmed_at(fs, now - std::chrono::hours{24 * 30}));
  m->update_filesystems({fs}, now);
  busy.insert("loop0");
  pass_time(*m, 10);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, quick_config().trim.gentle_chunk_bytes);
  EXPECT_TRUE(m->status(fs.id, now)->gentle);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "a gentle pass waits gentle_pause between chunks";
  advance(quick_config().trim.gentle_pause);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerTest, TheRateLimitSpacesChunksByTheirRange) {
  disks["loop0"] = {};
  Config config = quick_config();
  config.trim.rate_limit_bytes_per_sec = GiB / 2;  // a 1 GiB chunk per 2 s
  auto m = make(config);
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now, mono);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  advance(1900ms);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  advance(200ms);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerTest, AFilesystemOnARotationalDiskIsDisabledWhenSkipRotationalIsSet) {
  disks["sda"] = {};
  auto fs = make_fs("/a", "sda");
  fs.topology.disks[0].rotational = true;
  Config config = quick_config();
  config.trim.skip_rotational = true;
  auto m = make(config);
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Disabled);
}

TEST_F(ManagerTest, WaitingForIdleDisksLeavesWakingUpToTheNextSample) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  busy.insert("loop0");
  pass_time(*m, 3);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_GT(m->next_wakeup(now, mono), now + 1min) << "a timer at 'now' would spin the loop";
}

TEST_F(ManagerTest, BetweenChunksTheNextWakeupIsWhenThePauseEnds) {
  disks["loop0"] = {};
  Config config = quick_config();
  config.trim.chunk_pause = 300ms;
  auto m = make(config);
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now, mono);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  EXPECT_EQ(m->next_wakeup(now, mono), now + 300ms);
}

TEST_F(ManagerTest, APassOnAFilesystemUnmountedMidPassIsReportedAsNotCompleted) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  m->update_filesystems({}, now);
  EXPECT_FALSE(m->passes_active());
  ASSERT_EQ(m->finished_passes().count(fs.id), 1u);
  EXPECT_NE(m->finished_passes().at(fs.id).result, PassResult::Success);
}

TEST_F(ManagerTest, AMountPointThatKeepsVanishingFailsThePassAfterAFewRetries) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto jobs = m->take_jobs(now, mono);
    ASSERT_EQ(jobs.size(), 1u) << "attempt " << attempt;
    m->chunk_finished(jobs[0], failed(TrimStatus::Gone), now, mono);
    advance(31s);
    sample(*m);
  }
  EXPECT_FALSE(m->passes_active());
  EXPECT_EQ(outcome_text(m->status(fs.id, now)->last_result), "failed: simulated");
}

TEST_F(ManagerTest, TimedChunksStartSmallAndFollowTheSpeedOfTheLastCalls) {
  disks["loop0"] = {};
  Config config = quick_config();
  config.trim.chunk_time = 500ms;
  auto m = make(config);
  auto jobs = track_and_start(*m, make_fs("/mnt/a", "loop0", 100 * GiB));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, 64u << 20) << "nothing learned yet";

  auto finish_in = [&](ChunkJob& job, Duration took) {
    ChunkResult r = ok(job);
    r.elapsed = took;
    m->chunk_finished(job, r, now, mono);
  };
  finish_in(jobs[0], 4s);  // 16 MiB/s: a slow device
  jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, 16u << 20) << "16 MiB/s in 0.5 s would be 8 MiB: the floor";

  finish_in(jobs[0], 1ms);  // suddenly very fast: grows, up to chunk_size
  for (int i = 0; i < 5; ++i) {
    jobs = m->take_jobs(now, mono);
    ASSERT_EQ(jobs.size(), 1u);
    finish_in(jobs[0], 1ms);
  }
  jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, quick_config().trim.chunk_bytes);
}

// Issue 34: the growth follows what one discard costs the device.
TEST_F(ManagerTest, TimedChunksGrowFasterOnADeviceWhoseDiscardsAreCheap) {
  for (const auto& [per_discard, second_len] :
       {std::pair{Duration{250us}, 1024ull << 20}, std::pair{Duration{2ms}, 128ull << 20}}) {
    disks["loop0"] = {};
    Config config = quick_config();
    config.trim.chunk_time = 2s;
    auto m = make(config);
    auto jobs = track_and_start(*m, make_fs("/mnt/a", "loop0", 100 * GiB));
    ASSERT_EQ(jobs.size(), 1u);
    ASSERT_EQ(jobs[0].range.len, 64u << 20);
    ChunkResult r = ok(jobs[0]);
    r.elapsed = 25ms;  // 2.5 GiB/s: 5 GiB would fit in chunk_time
    r.discards = 100;
    r.discard_time = per_discard * 100;
    r.device_time = *r.discard_time;
    m->chunk_finished(jobs[0], r, now, mono);
    jobs = m->take_jobs(now, mono);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].range.len, second_len) << per_discard.count() << " us per discard";
  }
}

TEST_F(ManagerTest, TimedChunksOnExt4NeverSplitABlockGroup) {
  disks["loop0"] = {};
  Config config = quick_config();
  config.trim.chunk_time = 500ms;
  auto m = make(config);
  auto fs = make_fs("/mnt/a", "loop0");
  fs.geometry.group_bytes = 128ull << 20;
  auto jobs = track_and_start(*m, fs);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, 128u << 20);
}
