// The duty budget in the manager, on a fake clock: after each chunk its
// device time earns a pause on its disks; the pass stays "trimming" and says
// why; other filesystems on the disks wait too; killed chunks are charged.
#include "manager_fixture.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;

namespace {

Config with_duty(double duty) {
  Config config = quick_config();
  config.trim.duty = duty;
  return config;
}

ChunkResult costing(const ChunkJob& job, Duration device_time) {
  ChunkResult r;
  r.outcome.status = TrimStatus::Ok;
  r.outcome.bytes_reported = job.range.len;
  r.bytes_discarded = job.range.len;
  r.elapsed = device_time;
  r.device_time = device_time;
  return r;
}

}  // namespace

class ManagerDuty : public ManagerTest {
 protected:
  void SetUp() override { disks["loop0"] = {}; }
  DiscoveredFs fs = make_fs("/mnt/a", "loop0");
};

TEST_F(ManagerDuty, AfterAChunkTheNextWaitsUntilTheDeviceWasBusyForItsShareOfTheTime) {
  auto m = make(with_duty(0.10));
  auto jobs = track_and_start(*m, fs);
  ASSERT_EQ(jobs.size(), 1u);
  advance(1s);
  m->chunk_finished(jobs[0], costing(jobs[0], 1s), now, mono);

  advance(8900ms);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "1 s of discards at 10%: 9 s of pause";
  advance(100ms);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerDuty, WithoutABudgetTheNextChunkFollowsAtOnce) {
  auto m = make(with_duty(0));
  auto jobs = track_and_start(*m, fs);
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_finished(jobs[0], costing(jobs[0], 5s), now, mono);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerDuty, APacedPassIsTrimmingAndSaysWhoseTimeAndWhen) {
  auto m = make(with_duty(0.01));
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], costing(jobs[0], 2s), now, mono);
  advance(6s);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  const auto status = m->status(fs.id, now);
  EXPECT_EQ(status->state, FsState::Trimming) << "pacing is working, slowly";
  EXPECT_EQ(status->waiting_for, WaitingFor::Pacing);
  EXPECT_EQ(status->state_reason, "pacing: 1% of loop0's time, next chunk in 3min 12s");
  EXPECT_EQ(status->duty, 0.01);
  EXPECT_EQ(status->discard_busy, 2s);
  EXPECT_EQ(m->state(), ManagerState::Trimming);
  EXPECT_EQ(m->next_wakeup(now, mono), now + 192s) << "woken when the pause ends";
}

TEST_F(ManagerDuty, PacingCountsAsTrimmingNotWaitingInThePassesTimes) {
  auto m = make(with_duty(0.5));
  auto jobs = track_and_start(*m, make_fs("/mnt/a", "loop0", 2 * GiB));
  const TimePoint started = now;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(jobs.size(), 1u);
    advance(1s);
    m->chunk_finished(jobs[0], costing(jobs[0], 1s), now, mono);
    advance(1s);
    jobs = m->take_jobs(now, mono);
  }
  const auto status = m->status(fs.id, now);
  ASSERT_EQ(status->last_result->result, PassResult::Success);
  EXPECT_EQ(status->last_waited, 0s);
  EXPECT_EQ(status->last_trimming,
            std::chrono::duration_cast<Duration>(status->last_trim_end.value() - started));
}

TEST_F(ManagerDuty, AnotherFilesystemOnTheSameDiskWaitsForThePauseToo) {
  auto m = make(with_duty(0.10));
  const auto other = make_fs("/mnt/b", "loop0");
  m->update_filesystems({fs, other}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u) << "one chunk per disk at a time";
  const std::string first = jobs[0].fs_id;
  const std::string second = first == fs.id ? other.id : fs.id;
  m->chunk_finished(jobs[0], costing(jobs[0], 2s), now, mono);
  advance(17s);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->status(second, now)->waiting_for, WaitingFor::Pacing);
  advance(1s);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerDuty, AFilesystemOnAnotherDiskIsNotHeldByThisDisksPause) {
  disks["loop1"] = {};
  auto m = make(with_duty(0.10));
  const auto other = make_fs("/mnt/b", "loop1");
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_finished(jobs[0], costing(jobs[0], 2s), now, mono);
  m->update_filesystems({fs, other}, now);
  pass_time(*m, 6);
  jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].fs_id, other.id);
}

TEST_F(ManagerDuty, AKilledChunksDeviceTimeIsChargedToo) {
  auto m = make(with_duty(0.10));
  auto jobs = track_and_start(*m, fs);
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_discarded(jobs[0], 4096, 3s);
  m->chunk_interrupted(jobs[0], now, mono);
  advance(26s);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "3 s of discards: 27 s of pause";
  EXPECT_EQ(m->status(fs.id, now)->discard_busy, 3s);
  advance(1s);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerDuty, OverAWholePassTheDeviceIsBusyForNoMoreThanItsShare) {
  auto m = make(with_duty(0.10));
  auto jobs = track_and_start(*m, fs);  // 10 GiB: ten chunks of 1 GiB
  const SteadyPoint first = mono;
  Duration device_busy{0};
  SteadyPoint last_end = mono;
  int chunks = 0;
  for (int guard = 0; guard < 100000 && m->passes_active(); ++guard) {
    for (auto& job : jobs) {
      const Duration cost = Duration{300ms} + Duration{100ms} * (chunks % 4);
      advance(cost);
      device_busy += cost;
      m->chunk_finished(job, costing(job, cost), now, mono);
      last_end = mono;
      ++chunks;
    }
    advance(100ms);
    jobs = m->take_jobs(now, mono);
  }
  EXPECT_EQ(chunks, 10);
  const double wall = std::chrono::duration<double>(last_end - first).count();
  const double share = std::chrono::duration<double>(device_busy).count() / wall;
  EXPECT_LE(share, 0.10 * 10 / 9.1) << "the last chunk's pause lies after the pass";
  EXPECT_GE(share, 0.09) << "and no slower than the budget needs";
}

TEST_F(ManagerDuty, ThePauseEndsWithTheMonotonicClockNotTheWallClock) {
  auto m = make(with_duty(0.10));
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], costing(jobs[0], 1s), now, mono);
  now += 1h;  // the wall clock jumps ahead
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  mono += 9s;
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}
