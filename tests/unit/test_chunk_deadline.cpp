// When a chunk in flight is killed for time: the job's limit while it pins
// the mount or has met foreground I/O, the safety bound otherwise.
#include "chunk_deadline.hpp"

#include <gtest/gtest.h>

using namespace trimd;
using namespace std::chrono_literals;

namespace {

const SteadyPoint kStart = SteadyPoint{} + 1h;  // a fake monotonic clock
constexpr Duration kLimit = 4s;                 // twice the default chunk_time

}  // namespace

TEST(AChunkTrimmingThroughADetachedCopy, RunsPastItsTimeLimitWhileNoForegroundIoIsSeen) {
  const ChunkDeadline deadline(kStart, kLimit, MountHold::DetachedCopy);
  EXPECT_FALSE(deadline.passed(kStart + 16s)) << "a dense group takes as long as it takes";
  EXPECT_EQ(deadline.limit(), Duration{kMaxChunkTimeLimit});
}

TEST(AChunkTrimmingThroughADetachedCopy, IsStillKilledAtTheSafetyBound) {
  const ChunkDeadline deadline(kStart, kLimit, MountHold::DetachedCopy);
  EXPECT_FALSE(deadline.passed(kStart + kMaxChunkTimeLimit - 1ms));
  EXPECT_TRUE(deadline.passed(kStart + kMaxChunkTimeLimit)) << "a stuck call is not waited for";
}

TEST(AChunkTrimmingThroughADetachedCopy, IsHeldToItsTimeLimitOnceForegroundIoIsSeen) {
  ChunkDeadline deadline(kStart, kLimit, MountHold::DetachedCopy);
  EXPECT_FALSE(deadline.passed(kStart + 6s));
  deadline.foreground_seen();
  EXPECT_TRUE(deadline.passed(kStart + 6s)) << "already past 4 s: killed at the next sample";
  EXPECT_EQ(deadline.limit(), kLimit);
}

TEST(AChunkPinningTheMount, IsHeldToItsTimeLimitWithoutForegroundIo) {
  const ChunkDeadline deadline(kStart, kLimit, MountHold::MountItself);
  EXPECT_FALSE(deadline.passed(kStart + kLimit - 1ms));
  EXPECT_TRUE(deadline.passed(kStart + kLimit)) << "umount waits for it meanwhile";
}

TEST(AChunkWithoutATimeLimit, IsNeverKilledForTime) {
  const ChunkDeadline pinned(kStart, Duration{0}, MountHold::MountItself);
  const ChunkDeadline detached(kStart, Duration{0}, MountHold::DetachedCopy);
  EXPECT_FALSE(pinned.passed(kStart + 24h));
  EXPECT_FALSE(detached.passed(kStart + 24h));
}

TEST(TheEnforcedTimeLimit, NeverShortensALimitAboveTheSafetyBound) {
  const Duration long_limit = Duration{kMaxChunkTimeLimit} + 1min;
  EXPECT_EQ(enforced_time_limit(long_limit, MountHold::DetachedCopy, false), long_limit);
  EXPECT_EQ(enforced_time_limit(long_limit, MountHold::MountItself, true), long_limit);
}

TEST(TheEnforcedTimeLimit, IsTheJobsLimitWhenTheMountIsPinnedOrForegroundIoWasSeen) {
  EXPECT_EQ(enforced_time_limit(kLimit, MountHold::MountItself, false), kLimit);
  EXPECT_EQ(enforced_time_limit(kLimit, MountHold::DetachedCopy, true), kLimit);
  EXPECT_EQ(enforced_time_limit(kLimit, MountHold::DetachedCopy, false),
            Duration{kMaxChunkTimeLimit});
}
