// The manager and the machine it runs on: passes on battery (wait, gentle,
// trim; TrimNow still runs), a sleep that stops the chunk in flight and a
// wake after which the disks count as busy and the pass goes on from its
// cursor, and when the daemon should hold its delay lock on sleep.
#include "manager_fixture.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;

class ManagerMachine : public ManagerTest {
 protected:
  void SetUp() override { disks["loop0"] = {}; }
  DiscoveredFs fs = make_fs("/mnt/a", "loop0");

  static Config on_battery(OnBatteryPolicy policy) {
    Config config = quick_config();
    config.trim.on_battery = policy;
    return config;
  }
  // The one job handed out now.
  ChunkJob one_job(Manager& m) {
    auto jobs = m.take_jobs(now, mono);
    if (jobs.size() != 1)
      throw std::runtime_error("expected one job, got " + std::to_string(jobs.size()));
    return jobs[0];
  }
  std::uint64_t cursor(const Manager& m) const {
    return m.persistent_state().at(fs.id).cursor.value_or(0);
  }
};

TEST_F(ManagerMachine, OnBatteryADuePassWaitsWithoutStartingAndSaysWhy) {
  auto m = make();
  m->set_on_battery(true, now);
  EXPECT_TRUE(track_and_start(*m, fs).empty());
  const FsStatus status = *m->status(fs.id, now);
  EXPECT_EQ(status.state, FsState::Waiting);
  EXPECT_EQ(status.waiting_for, WaitingFor::OnBattery);
  EXPECT_EQ(status.state_reason, "on battery power (on_battery = \"wait\")");
  EXPECT_FALSE(m->passes_active()) << "the pass did not even start";
  EXPECT_EQ(m->next_wakeup(now, mono), now + 1h) << "AC power wakes the loop, not a timer";

  m->set_on_battery(false, now);
  const ChunkJob job = one_job(*m);
  EXPECT_EQ(job.range.start, 0u);
}

TEST_F(ManagerMachine, APassUnderWayStopsBetweenChunksOnBatteryAndGoesOnFromItsCursorOnAc) {
  auto m = make();
  const ChunkJob first = track_and_start(*m, fs).at(0);
  m->set_on_battery(true, now);
  m->chunk_finished(first, ok(first), now, mono);  // the chunk in flight is not killed
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->status(fs.id, now)->waiting_for, WaitingFor::OnBattery);
  EXPECT_EQ(cursor(*m), first.range.start + first.range.len);

  pass_time(*m, 60);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  m->set_on_battery(false, now);
  EXPECT_EQ(one_job(*m).range.start, first.range.start + first.range.len);
}

TEST_F(ManagerMachine, TrimNowRunsOnBatteryAtFullPace) {
  auto m = make();
  m->set_on_battery(true, now);
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  m->trim_now({fs.id}, false, now);
  const ChunkJob job = one_job(*m);
  EXPECT_EQ(job.range.len, GiB);
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Trimming);
  EXPECT_FALSE(m->status(fs.id, now)->gentle);
}

TEST_F(ManagerMachine, GentleOnBatteryTrimsSmallChunksWithLongPausesStillOnlyWhenIdle) {
  Config config = on_battery(OnBatteryPolicy::Gentle);
  config.trim.gentle_chunk_bytes = 64ull << 20;
  config.trim.gentle_pause = 5s;
  auto m = make(config);
  m->set_on_battery(true, now);
  m->update_filesystems({fs}, now);
  busy.insert("loop0");
  pass_time(*m, 10);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "gentle on battery still waits for idle disks";
  busy.clear();
  pass_time(*m, 6);

  const ChunkJob job = one_job(*m);
  EXPECT_EQ(job.range.len, 64ull << 20);
  EXPECT_EQ(job.on_foreground, OnForeground::Preempt) << "idle disks: foreground I/O preempts";
  EXPECT_TRUE(m->status(fs.id, now)->gentle);
  m->chunk_finished(job, ok(job), now, mono);
  advance(4s);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "gentle_pause between chunks";
  advance(1s);
  EXPECT_EQ(one_job(*m).range.start, 64ull << 20);
}

TEST_F(ManagerMachine, GentleEndsWithTheBattery) {
  auto m = make(on_battery(OnBatteryPolicy::Gentle));
  m->set_on_battery(true, now);
  const ChunkJob job = track_and_start(*m, fs).at(0);
  EXPECT_EQ(job.range.len, m->config().trim.gentle_chunk_bytes);
  m->chunk_finished(job, ok(job), now, mono);
  m->set_on_battery(false, now);
  advance(m->config().trim.gentle_pause);
  EXPECT_EQ(one_job(*m).range.len, GiB);
  EXPECT_FALSE(m->status(fs.id, now)->gentle);
}

TEST_F(ManagerMachine, TrimOnBatteryTrimsAsOnAc) {
  auto m = make(on_battery(OnBatteryPolicy::Trim));
  m->set_on_battery(true, now);
  const auto jobs = track_and_start(*m, fs);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, GiB);
}

TEST_F(ManagerMachine, AFilesystemRuleMayLetOneFilesystemTrimOnBattery) {
  Config config = quick_config();
  PolicyOverride rule;
  rule.mount_point_glob = "/mnt/a";
  rule.changes.push_back([](TrimPolicy& policy) { policy.on_battery = OnBatteryPolicy::Trim; });
  config.overrides.push_back(rule);
  auto m = make(config);
  m->set_on_battery(true, now);
  disks["loop1"] = {};
  const DiscoveredFs other = make_fs("/mnt/b", "loop1");
  m->update_filesystems({fs, other}, now);
  pass_time(*m, 6);
  const ChunkJob job = one_job(*m);
  EXPECT_EQ(job.fs_id, fs.id);
  EXPECT_EQ(m->status(other.id, now)->waiting_for, WaitingFor::OnBattery);
}

TEST_F(ManagerMachine, ASleepStopsTheChunkInFlightAndNoChunkStartsUntilTheWake) {
  auto m = make();
  const ChunkJob first = track_and_start(*m, fs).at(0);
  m->chunk_finished(first, ok(first), now, mono);
  const ChunkJob second = one_job(*m);

  m->sleep_coming(now);
  EXPECT_EQ(m->jobs_to_stop(), std::vector<std::uint64_t>{second.serial});
  m->chunk_interrupted(second, now, mono);
  EXPECT_EQ(cursor(*m), second.range.start) << "the cursor stays at the stopped chunk's start";
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  pass_time(*m, 30);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "asleep: no chunk";
  EXPECT_TRUE(m->passes_active());
}

TEST_F(ManagerMachine, AfterTheWakeTheDisksCountAsBusyThenThePassGoesOnFromItsCursor) {
  auto m = make();
  const ChunkJob first = track_and_start(*m, fs).at(0);
  m->chunk_finished(first, ok(first), now, mono);
  const ChunkJob second = one_job(*m);
  m->sleep_coming(now);
  m->chunk_interrupted(second, now, mono);

  advance(8h);  // asleep: no samples
  m->woke(now);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "a machine that wakes is not idle yet";
  EXPECT_EQ(m->status(fs.id, now)->waiting_for, WaitingFor::DisksBusy);
  pass_time(*m, 4);  // quiet, but less than the 5 s idle window
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  pass_time(*m, 2);
  const ChunkJob again = one_job(*m);
  EXPECT_EQ(again.range.start, second.range.start);
  EXPECT_GT(again.range.start, 0u) << "the pass goes on; it does not start over";
}

TEST_F(ManagerMachine, ChunksMayStartWhileAPassIsDueOrUnderWayAndNotHeldByTheMachine) {
  auto m = make(quick_config(), trimmed_at(fs, now));  // next pass a week away
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  m->take_jobs(now, mono);
  EXPECT_FALSE(m->chunks_may_start(now)) << "nothing due";

  m->trim_now({fs.id}, false, now);
  EXPECT_TRUE(m->chunks_may_start(now)) << "asked for";
  const ChunkJob job = one_job(*m);
  EXPECT_TRUE(m->chunks_may_start(now)) << "a chunk in flight";
  m->chunk_finished(job, ok(job), now, mono);
  busy.insert("loop0");
  pass_time(*m, 2);
  m->take_jobs(now, mono);
  EXPECT_TRUE(m->chunks_may_start(now)) << "waiting for idle disks: a chunk may start any time";

  m->pause({fs.id}, now);
  m->take_jobs(now, mono);
  EXPECT_FALSE(m->chunks_may_start(now)) << "paused";
  m->resume({fs.id}, now);
  m->take_jobs(now, mono);
  EXPECT_TRUE(m->chunks_may_start(now));
  m->sleep_coming(now);
  EXPECT_FALSE(m->chunks_may_start(now)) << "asleep";
  m->woke(now);
  EXPECT_TRUE(m->chunks_may_start(now));
}

TEST_F(ManagerMachine, AScheduledPassWaitingOnBatteryNeedsNoLockOnSleep) {
  auto m = make();
  m->set_on_battery(true, now);
  track_and_start(*m, fs);
  EXPECT_FALSE(m->chunks_may_start(now));
  m->set_on_battery(false, now);
  m->take_jobs(now, mono);
  EXPECT_TRUE(m->chunks_may_start(now));
}
