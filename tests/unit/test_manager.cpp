// The manager on a fake clock, fake disks and a test-driven "kernel": the
// test decides how each chunk job ends.
#include "manager.hpp"

#include <gtest/gtest.h>

using namespace trimd;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t GiB = 1ull << 30;

DiscoveredFs make_fs(const std::string& mount_point, const std::string& disk,
                     std::uint64_t size = 10 * GiB, const std::string& type = "ext4") {
  DiscoveredFs fs;
  fs.mount.mount_point = mount_point;
  fs.mount.source = "/dev/" + disk;
  fs.mount.fs_type = type;
  fs.mount.major = 7;
  fs.mount.minor = 0;
  fs.uuid = "uuid-of-" + disk + mount_point;
  fs.id = filesystem_id(fs.uuid, fs.mount);
  BlockDisk d;
  d.name = disk;
  d.size_bytes = size;
  d.discard_max_bytes = 4 * GiB;
  fs.topology.devices = {d};
  fs.topology.disks = {d};
  fs.geometry.fs_type = type;
  fs.geometry.size_bytes = size;
  return fs;
}

Config quick_config() {
  Config config;
  config.idle.idle_window = 5s;
  config.trim.schedule.first_delay = 0s;
  config.trim.schedule.randomized_delay = 0s;
  config.trim.chunk_pause = 0s;
  config.trim.chunk_time = 0s;  // fixed chunks unless a test sizes them by time
  return config;
}

// Drives a manager through time with a set of disks whose write counters
// grow only while they are "busy".
class ManagerTest : public ::testing::Test {
 protected:
  TimePoint now = Clock::from_time_t(1'800'000'000);
  std::map<std::string, DiskCounters> disks;
  std::set<std::string> busy;

  std::unique_ptr<Manager> make(Config config = quick_config(), StateMap state = {}) {
    auto m = std::make_unique<Manager>(std::move(config), std::move(state), now);
    return m;
  }

  void sample(Manager& m) {
    std::vector<DiskStat> stats;
    for (auto& [name, c] : disks) {
      if (busy.count(name)) {
        c.writes_completed += 5000;
        c.sectors_written += 5000 * 8;
        c.ms_writing += 900;
      }
      stats.push_back(DiskStat{7, 0, name, c});
    }
    m.observe_diskstats(stats, now);
  }

  // Let `seconds` pass, sampling once a second.
  void pass_time(Manager& m, int seconds) {
    for (int i = 0; i < seconds; ++i) {
      now += 1s;
      sample(m);
    }
  }

  static ChunkResult ok(const ChunkJob& job, std::uint64_t discarded = 1000) {
    ChunkResult r;
    r.outcome.status = TrimStatus::Ok;
    r.outcome.bytes_reported = job.range.len;
    r.bytes_discarded = discarded;
    r.elapsed = 1ms;
    return r;
  }

  static ChunkResult failed(TrimStatus status) {
    ChunkResult r;
    r.outcome.status = status;
    r.outcome.message = "simulated";
    return r;
  }

  // A state in which `fs` had a successful pass that ended at `when`.
  static StateMap trimmed_at(const DiscoveredFs& fs, TimePoint when) {
    StateMap state;
    state[fs.id].last_end = when;
    state[fs.id].last_result = "success";
    return state;
  }

  // Track `fs`, keep its disk quiet past the idle window, take the first chunk.
  std::vector<ChunkJob> track_and_start(Manager& m, const DiscoveredFs& fs) {
    m.update_filesystems({fs}, now);
    pass_time(m, 6);
    return m.take_jobs(now);
  }

  // Run chunks (each succeeding) until none is handed out; returns how many.
  int run_to_completion(Manager& m, int max_chunks = 1000) {
    int chunks = 0;
    for (int guard = 0; guard < max_chunks; ++guard) {
      auto jobs = m.take_jobs(now);
      if (jobs.empty()) break;
      for (auto& job : jobs) {
        m.chunk_finished(job, ok(job), now);
        ++chunks;
      }
      now += 1ms;
    }
    return chunks;
  }
};

class RecordingListener : public ManagerListener {
 public:
  std::vector<std::string> events;
  void filesystem_added(const FsStatus& s) override { events.push_back("added " + s.mount_point); }
  void filesystem_removed(const std::string& id) override { events.push_back("removed " + id); }
  void trim_started(const std::string& id) override { events.push_back("started " + id); }
  void trim_finished(const std::string& id, const std::string& result, std::uint64_t bytes,
                     Duration) override {
    events.push_back("finished " + id + " " + result + " " + std::to_string(bytes));
  }
};

}  // namespace

TEST_F(ManagerTest, ADueFilesystemIsTrimmedInChunksUntilThePassCompletes) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);

  EXPECT_EQ(run_to_completion(*m), 10);  // 10 GiB in 1 GiB chunks
  auto status = m->status(make_fs("/mnt/a", "loop0").id, now);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->last_result, "success");
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
  EXPECT_TRUE(m->take_jobs(now).empty());
  EXPECT_EQ(m->statuses(now)[0].state, FsState::Waiting);

  busy.clear();
  pass_time(*m, 3);
  EXPECT_TRUE(m->take_jobs(now).empty()) << "quiet for less than the idle window";
  pass_time(*m, 3);
  EXPECT_EQ(m->take_jobs(now).size(), 1u);
}

TEST_F(ManagerTest, ForegroundIoBetweenChunksStopsThePassUntilIdleAgain) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now);
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_finished(jobs[0], ok(jobs[0]), now);

  busy.insert("loop0");
  pass_time(*m, 1);
  EXPECT_TRUE(m->take_jobs(now).empty());
  busy.clear();
  pass_time(*m, 6);
  jobs = m->take_jobs(now);
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
  m->chunk_finished(jobs[0], ok(jobs[0]), now);
  EXPECT_EQ(run_to_completion(*m), 3);
}

TEST_F(ManagerTest, ProgressIsPersistedAfterEveryChunk) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->mark_state_saved();
  m->chunk_finished(jobs[0], ok(jobs[0]), now);
  EXPECT_TRUE(m->state_dirty());
  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, GiB);
}

TEST_F(ManagerTest, TwoFilesystemsOnOneDiskNeverTrimAtTheSameTime) {
  disks["sda"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/a", "sda"), make_fs("/b", "sda")}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_TRUE(m->take_jobs(now).empty()) << "the disk is still busy with the first chunk";
  m->chunk_finished(jobs[0], ok(jobs[0]), now);
  EXPECT_EQ(m->take_jobs(now).size(), 1u);
}

TEST_F(ManagerTest, FilesystemsOnDifferentDisksAreTrimmedInParallel) {
  disks["sda"] = {};
  disks["sdb"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/a", "sda"), make_fs("/b", "sdb")}, now);
  pass_time(*m, 6);
  EXPECT_EQ(m->take_jobs(now).size(), 2u);
}

TEST_F(ManagerTest, PauseStopsNewChunksAndResumeContinuesFromTheCursor) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->pause({fs.id}, now);
  m->chunk_finished(jobs[0], ok(jobs[0]), now);  // the chunk in the kernel completes
  pass_time(*m, 10);
  EXPECT_TRUE(m->take_jobs(now).empty());
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Paused);

  m->resume({fs.id}, now);
  jobs = m->take_jobs(now);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.start, GiB);
}

TEST_F(ManagerTest, PausingEverythingAlsoHoldsFilesystemsThatAppearLater) {
  disks["sda"] = {};
  disks["sdb"] = {};
  auto m = make();
  m->pause({}, now);
  m->update_filesystems({make_fs("/a", "sda"), make_fs("/b", "sdb")}, now);
  pass_time(*m, 6);
  EXPECT_TRUE(m->take_jobs(now).empty());
  EXPECT_EQ(m->state(), "paused");
  m->resume({}, now);
  EXPECT_EQ(m->take_jobs(now).size(), 2u);
}

TEST_F(ManagerTest, CancelEndsThePassAndRecordsCancelled) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->cancel({fs.id}, now);
  m->chunk_finished(jobs[0], ok(jobs[0]), now);
  EXPECT_TRUE(m->take_jobs(now).empty());
  EXPECT_EQ(m->status(fs.id, now)->last_result, "cancelled");
  EXPECT_FALSE(m->passes_active());
}

TEST_F(ManagerTest, AFilesystemWithoutFitrimIsMarkedUnsupportedAndNotTriedAgain) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], failed(TrimStatus::Unsupported), now);
  now += std::chrono::hours{24 * 30};
  sample(*m);
  EXPECT_TRUE(m->take_jobs(now).empty());
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Unsupported);
  EXPECT_THROW(m->trim_now({fs.id}, true, now), ManagerError);
}

TEST_F(ManagerTest, RangePastTheEndCompletesThePass) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], failed(TrimStatus::PastEnd), now);
  EXPECT_EQ(m->status(fs.id, now)->last_result, "success");
}

TEST_F(ManagerTest, AVanishedFilesystemKeepsItsCursorForWhenItReturns) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], ok(jobs[0]), now);
  jobs = m->take_jobs(now);
  m->update_filesystems({}, now);  // unmounted while the chunk runs
  m->chunk_finished(jobs[0], failed(TrimStatus::Gone), now);
  EXPECT_TRUE(m->statuses(now).empty());
  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, GiB);

  m->update_filesystems({fs}, now);
  jobs = m->take_jobs(now);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.start, GiB);
}

TEST_F(ManagerTest, AFailedChunkFailsThePassAndRetriesWithinTheHour) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], failed(TrimStatus::Error), now);
  auto status = m->status(fs.id, now);
  EXPECT_EQ(status->state, FsState::Error);
  EXPECT_EQ(status->last_result, "failed: simulated");
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
  auto jobs = m->take_jobs(now);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, quick_config().trim.gentle_chunk_bytes);
  EXPECT_TRUE(m->status(fs.id, now)->gentle);
  m->chunk_finished(jobs[0], ok(jobs[0]), now);
  EXPECT_TRUE(m->take_jobs(now).empty()) << "a gentle pass waits gentle_pause between chunks";
  now += quick_config().trim.gentle_pause;
  EXPECT_EQ(m->take_jobs(now).size(), 1u);
}

TEST_F(ManagerTest, TheRateLimitSpacesChunksByTheirRange) {
  disks["loop0"] = {};
  Config config = quick_config();
  config.trim.rate_limit_bytes_per_sec = GiB / 2;  // a 1 GiB chunk per 2 s
  auto m = make(config);
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now);
  m->chunk_finished(jobs[0], ok(jobs[0]), now);
  now += 1900ms;
  EXPECT_TRUE(m->take_jobs(now).empty());
  now += 200ms;
  EXPECT_EQ(m->take_jobs(now).size(), 1u);
}

TEST_F(ManagerTest, TrimNowIgnoringIdleRunsOnBusyDisksBeforeTheFilesystemIsDue) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make(quick_config(), trimmed_at(fs, now));
  m->update_filesystems({fs}, now);
  busy.insert("loop0");
  pass_time(*m, 10);
  EXPECT_TRUE(m->take_jobs(now).empty());
  m->trim_now({fs.id}, true, now);
  EXPECT_EQ(m->take_jobs(now).size(), 1u);
}

TEST_F(ManagerTest, NotifyFreedMakesTheFilesystemDueAtTheNextIdleWindow) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make(quick_config(), trimmed_at(fs, now));
  m->update_filesystems({fs}, now);
  pass_time(*m, 10);
  EXPECT_TRUE(m->take_jobs(now).empty());
  m->notify_freed(fs.id, 50 * GiB, now);
  EXPECT_EQ(m->take_jobs(now).size(), 1u);
}

TEST_F(ManagerTest, UnknownIdsAreRejectedWithNotFound) {
  auto m = make();
  try {
    m->trim_now({"uuid-nope"}, false, now);
    FAIL() << "expected ManagerError";
  } catch (const ManagerError& e) {
    EXPECT_EQ(e.kind(), ManagerError::Kind::NotFound);
  }
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
  EXPECT_TRUE(m->take_jobs(now).empty());
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Disabled);
}

TEST_F(ManagerTest, ListenersHearAboutFilesystemsAndPasses) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0", 2 * GiB);
  auto m = make();
  RecordingListener listener;
  m->set_listener(&listener);
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  run_to_completion(*m);
  m->update_filesystems({}, now);
  std::vector<std::string> expected = {"added /mnt/a", "started " + fs.id,
                                       "finished " + fs.id + " success 2000", "removed " + fs.id};
  EXPECT_EQ(listener.events, expected);
}

TEST_F(ManagerTest, StopHandsOutNoMoreChunks) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);
  m->stop();
  EXPECT_TRUE(m->take_jobs(now).empty());
}

TEST_F(ManagerTest, WaitingForIdleDisksLeavesWakingUpToTheNextSample) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  busy.insert("loop0");
  pass_time(*m, 3);
  EXPECT_TRUE(m->take_jobs(now).empty());
  EXPECT_GT(m->next_wakeup(now), now + 1min) << "a timer at 'now' would spin the loop";
}

TEST_F(ManagerTest, BetweenChunksTheNextWakeupIsWhenThePauseEnds) {
  disks["loop0"] = {};
  Config config = quick_config();
  config.trim.chunk_pause = 300ms;
  auto m = make(config);
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now);
  m->chunk_finished(jobs[0], ok(jobs[0]), now);
  EXPECT_EQ(m->next_wakeup(now), now + 300ms);
}

TEST_F(ManagerTest, APassOnAFilesystemUnmountedMidPassIsReportedAsNotCompleted) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], ok(jobs[0]), now);
  m->update_filesystems({}, now);
  EXPECT_FALSE(m->passes_active());
  ASSERT_EQ(m->finished_results().count(fs.id), 1u);
  EXPECT_NE(m->finished_results().at(fs.id), "success");
}

TEST_F(ManagerTest, AMountPointThatKeepsVanishingFailsThePassAfterAFewRetries) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto jobs = m->take_jobs(now);
    ASSERT_EQ(jobs.size(), 1u) << "attempt " << attempt;
    m->chunk_finished(jobs[0], failed(TrimStatus::Gone), now);
    now += 31s;
    sample(*m);
  }
  EXPECT_FALSE(m->passes_active());
  EXPECT_EQ(m->status(fs.id, now)->last_result, "failed: simulated");
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
    m->chunk_finished(job, r, now);
  };
  finish_in(jobs[0], 4s);  // 16 MiB/s: a slow device
  jobs = m->take_jobs(now);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, 16u << 20) << "16 MiB/s in 0.5 s would be 8 MiB: the floor";

  finish_in(jobs[0], 1ms);  // suddenly very fast: grows, up to chunk_size
  for (int i = 0; i < 5; ++i) {
    jobs = m->take_jobs(now);
    ASSERT_EQ(jobs.size(), 1u);
    finish_in(jobs[0], 1ms);
  }
  jobs = m->take_jobs(now);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, quick_config().trim.chunk_bytes);
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
