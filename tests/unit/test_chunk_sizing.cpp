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

TEST(ChunkGrowth, IsTwofoldOnASlowOrUnknownDeviceAndMoreAsItsDiscardsGetCheaper) {
  EXPECT_EQ(chunk_growth(0us), 2.0) << "unknown";
  EXPECT_EQ(chunk_growth(2ms), 2.0) << "the exclusive and queued models, a SATA SSD";
  EXPECT_EQ(chunk_growth(20ms), 2.0);
  EXPECT_EQ(chunk_growth(1ms), 4.0);
  EXPECT_EQ(chunk_growth(1900us), 2.0) << "a 2 ms device measured a little fast: no change";
  EXPECT_EQ(chunk_growth(1100us), 2.0);
  EXPECT_EQ(chunk_growth(700us), 4.0) << "whole times faster";
  EXPECT_EQ(chunk_growth(500us), 8.0);
  EXPECT_EQ(chunk_growth(250us), 16.0) << "the thin model's discards through FUSE";
  EXPECT_EQ(chunk_growth(10us), kMaxChunkGrowth);
}

TEST(ChunkLength, OnAFastDeviceReachesTheTimeBudgetInOneStep) {
  // The thin model: 128 MiB in 47 ms (2.7 GiB/s), discards of 0.25 ms.
  const double rate = 2.7 * 1024 * MiB;
  TrimPolicy policy = timed(2s);
  policy.chunk_bytes = 16ull * 1024 * MiB;
  EXPECT_EQ(chunk_length(policy, false, rate, 128 * MiB, 250us), 2048 * MiB) << "16 x 128 MiB";
  EXPECT_EQ(chunk_length(policy, false, rate, 128 * MiB, 2ms), 256 * MiB) << "a slow device: 2x";
  EXPECT_EQ(chunk_length(policy, false, rate, 2048 * MiB, 250us),
            static_cast<std::uint64_t>(rate * 2))
      << "then what fits in chunk_time";
}

TEST(LearnDiscardTime, AveragesTheMeanOfChunksWithEnoughDiscards) {
  EXPECT_EQ(learn_discard_time(0us, 500ms, 1000), 500us);
  EXPECT_EQ(learn_discard_time(500us, 2s, 1000), 1250us);
  EXPECT_EQ(learn_discard_time(500us, 2s, kMinDiscardsToLearn - 1), 500us)
      << "a few large extents tell their size, not the device's speed";
  EXPECT_EQ(learn_discard_time(500us, 0s, 1000), 500us);
}
