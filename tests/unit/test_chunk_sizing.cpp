// Chunk lengths from a time budget per FITRIM call.
#include "chunk_sizing.hpp"

#include <gtest/gtest.h>

using namespace trimd;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t MiB = 1ull << 20;

TrimPolicy timed(Duration budget) {
  TrimPolicy policy;
  policy.chunk_bytes = 1024 * MiB;
  policy.gentle_chunk_bytes = 64 * MiB;
  policy.chunk_time = budget;
  return policy;
}

}  // namespace

TEST(ChunkLength, IsTheChunkSizeWhenNoTimeBudgetIsSet) {
  EXPECT_EQ(chunk_length(timed(0s), false, 1.0), 1024 * MiB);
  EXPECT_EQ(chunk_length(timed(0s), true, 1.0), 64 * MiB);
}

TEST(ChunkLength, StartsAtAtMost64MiBBeforeAnythingIsLearned) {
  EXPECT_EQ(chunk_length(timed(500ms), false, 0), 64 * MiB);
}

TEST(ChunkLength, FitsTheBudgetAtTheLearnedSpeed) {
  const double hundred_mib_per_sec = 100.0 * MiB;
  EXPECT_EQ(chunk_length(timed(500ms), false, hundred_mib_per_sec), 50 * MiB);
}

TEST(ChunkLength, NeverGoesBelow16MiBNorAboveTheChunkSize) {
  EXPECT_EQ(chunk_length(timed(500ms), false, 1.0 * MiB), 16 * MiB);
  EXPECT_EQ(chunk_length(timed(500ms), false, 1e15), 1024 * MiB);
  EXPECT_EQ(chunk_length(timed(500ms), true, 1e15), 64 * MiB) << "gentle chunks stay gentle";
}

TEST(LearnRate, TakesTheFirstSampleAndThenAveragesWithTheLast) {
  const TrimRange range{0, 100 * MiB, 0};
  const double first = learn_rate(0, range, 1s);
  EXPECT_DOUBLE_EQ(first, 100.0 * MiB);
  EXPECT_DOUBLE_EQ(learn_rate(first, range, 4s), (100.0 * MiB + 25.0 * MiB) / 2);
}

TEST(LearnRate, IgnoresUnboundedRangesAndInstantCalls) {
  EXPECT_DOUBLE_EQ(learn_rate(5.0, TrimRange{0, UINT64_MAX, 0}, 1s), 5.0);
  EXPECT_DOUBLE_EQ(learn_rate(5.0, TrimRange{0, 100 * MiB, 0}, 0us), 5.0);
}

TEST(ChunkLength, GrowsAtMostTwofoldFromTheLastChunk) {
  // 128 MiB over almost no free space went fast; the next must not jump to 1 GiB.
  EXPECT_EQ(chunk_length(timed(500ms), false, 1e10, 128 * MiB), 256 * MiB);
  EXPECT_EQ(chunk_length(timed(500ms), false, 1e10, 600 * MiB), 1024 * MiB);
  EXPECT_EQ(chunk_length(timed(0s), false, 1e10, 128 * MiB), 1024 * MiB) << "untimed: fixed";
}
