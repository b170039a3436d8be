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
  EXPECT_TRUE(m->status(fs.id, now)->last_result.starts_with("failed"));
}
