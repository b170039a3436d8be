// The bound on how long trimd holds a filesystem: every chunk carries a time
// limit, and a chunk killed for it is retried smaller after a rest.
#include "chunk_sizing.hpp"
#include "manager_fixture.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;

class ChunkTimeLimit : public ManagerTest {
 protected:
  void SetUp() override { disks["loop0"] = {}; }
  DiscoveredFs fs = make_fs("/mnt/a", "loop0");

  static Config timed(Duration chunk_time) {
    Config config = quick_config();
    config.trim.chunk_time = chunk_time;
    return config;
  }
  std::vector<ChunkJob> jobs_after(Manager& m, Duration wait) {
    advance(wait);
    sample(m);
    return m.take_jobs(now, mono);
  }
};

TEST_F(ChunkTimeLimit, IsTwiceChunkTimeWithAFloorAndAFixedValueForFixedChunks) {
  TrimPolicy policy;
  policy.chunk_time = 2s;
  EXPECT_EQ(chunk_time_limit(policy), 4s);
  policy.chunk_time = 100ms;
  EXPECT_EQ(chunk_time_limit(policy), kMinChunkTimeLimit);
  policy.chunk_time = 0s;
  EXPECT_EQ(chunk_time_limit(policy), kFixedChunkTimeLimit);
}

TEST_F(ChunkTimeLimit, EveryJobCarriesItsFilesystemsLimit) {
  auto m = make(timed(3s));
  auto jobs = track_and_start(*m, fs);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].time_limit, 6s);
}

TEST_F(ChunkTimeLimit, ATimedOutChunkIsRetriedFromItsStartAtHalfTheLengthAfterARest) {
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  const ChunkJob first = jobs.at(0);
  m->chunk_timed_out(first, now, mono);
  EXPECT_EQ(m->persistent_state().at(fs.id).cursor, first.range.start);
  EXPECT_TRUE(jobs_after(*m, 500ms).empty()) << "the filesystem was not left alone for a moment";
  auto retry = jobs_after(*m, 600ms);
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].range.start, first.range.start);
  EXPECT_EQ(retry[0].range.len, first.range.len / 2);
}

TEST_F(ChunkTimeLimit, APassWhoseChunksKeepOverrunningFailsInsteadOfLoopingForever) {
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  for (int i = 0; i < 100 && !jobs.empty(); ++i) {
    m->chunk_timed_out(jobs.at(0), now, mono);
    jobs = jobs_after(*m, 2s);
  }
  EXPECT_TRUE(jobs.empty());
  EXPECT_FALSE(m->passes_active());
  EXPECT_EQ(m->status(fs.id, now)->last_result->result, PassResult::Failed);
}

TEST_F(ChunkTimeLimit, DoublingsRaiseTheLimitUpToItsCap) {
  TrimPolicy policy;
  policy.chunk_time = 2s;
  EXPECT_EQ(chunk_time_limit(policy, 1), 8s);
  EXPECT_EQ(chunk_time_limit(policy, 3), 32s);
  EXPECT_EQ(chunk_time_limit(policy, 40), kMaxChunkTimeLimit);
}

// One ext4 block group dense with small free extents on a slow device may
// take longer than the limit, and the planner never splits a group: the
// retries get more time instead of failing the pass.
TEST_F(ChunkTimeLimit, AChunkThatCannotShrinkIsRetriedWithTwiceTheTimeUntilItFinishes) {
  constexpr std::uint64_t kGroup = 128ull << 20;
  DiscoveredFs grouped = make_fs("/mnt/g", "loop0", 4 * kGroup);
  grouped.geometry.group_bytes = kGroup;
  Config config = timed(2s);
  config.trim.chunk_bytes = kGroup;
  auto m = make(config);
  auto jobs = track_and_start(*m, grouped);
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_EQ(jobs[0].range.len, kGroup);
  EXPECT_EQ(jobs[0].time_limit, 4s);

  m->chunk_timed_out(jobs[0], now, mono);  // it may be split yet: no more time
  jobs = jobs_after(*m, 2s);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.len, kGroup) << "the planner split a block group";
  EXPECT_EQ(jobs[0].time_limit, 4s);

  m->chunk_timed_out(jobs[0], now, mono);  // no shorter than the last: twice the time
  jobs = jobs_after(*m, 2s);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].time_limit, 8s);
  m->chunk_timed_out(jobs[0], now, mono);
  jobs = jobs_after(*m, 2s);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].time_limit, 16s);

  const std::uint64_t start = jobs[0].range.start;
  ChunkResult done;
  done.outcome.bytes_reported = kGroup;
  done.bytes_discarded = kGroup;
  done.elapsed = 10s;
  m->chunk_finished(jobs[0], done, now, mono);
  EXPECT_GT(m->persistent_state().at(grouped.id).cursor.value_or(0), start);
  EXPECT_TRUE(m->passes_active()) << "the pass gave up on the dense group";
}
