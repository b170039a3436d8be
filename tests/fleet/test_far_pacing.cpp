// When a waiter far from a slot reads the claims again (far_pacing.hpp):
// soon after its first read, half the estimated way to the near window
// after that, backing off while the line stands still, always within
// [kFarReadMin, kFarReadMax].
#include "far_pacing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {

using namespace std::chrono_literals;
using trimd::Duration;
using trimd::SteadyPoint;
using trimd::fleet::FarPacing;
using trimd::fleet::jittered;
using trimd::fleet::kFarReadFirst;
using trimd::fleet::kFarReadMax;
using trimd::fleet::kFarReadMin;

const SteadyPoint t0{};

TEST(FarPacing, ReadsAgainSoonAfterTheFirstRead) {
  FarPacing pacing;
  EXPECT_EQ(pacing.next(t0, 100, 5000), kFarReadFirst);
}

TEST(FarPacing, ReadsAgainWhenHalfTheWayToTheWindowIsLeft) {
  FarPacing pacing;
  pacing.next(t0, 100, 700);
  // 100 revisions in 2 s: 20 ms each; 500 left is 10 s, half of it 5 s.
  EXPECT_EQ(pacing.next(t0 + 2s, 200, 700), 5s);
}

TEST(FarPacing, ReadsAtMostOnceASecondHoweverNearTheEstimate) {
  FarPacing pacing;
  pacing.next(t0, 100, 210);
  EXPECT_EQ(pacing.next(t0 + 2s, 200, 210), kFarReadMin);
  EXPECT_EQ(pacing.next(t0 + 3s, 300, 210), kFarReadMin) << "already past: as soon as allowed";
}

TEST(FarPacing, ReadsAtLeastEveryMaxHoweverFarTheClaim) {
  FarPacing pacing;
  pacing.next(t0, 100, 1'000'000);
  EXPECT_EQ(pacing.next(t0 + 2s, 101, 1'000'000), kFarReadMax);
}

TEST(FarPacing, BacksOffDoublingWhileTheLineStandsStill) {
  FarPacing pacing;
  pacing.next(t0, 100, 5000);
  EXPECT_EQ(pacing.next(t0 + 2s, 100, 5000), 2 * kFarReadFirst);
  EXPECT_EQ(pacing.next(t0 + 6s, 100, 5000), 4 * kFarReadFirst);
  for (int i = 0; i < 10; ++i) pacing.next(t0 + 10s + i * 30s, 100, 5000);
  EXPECT_EQ(pacing.next(t0 + 10min, 100, 5000), kFarReadMax);
}

TEST(FarPacing, StartsAfreshAfterAReset) {
  FarPacing pacing;
  pacing.next(t0, 100, 5000);
  pacing.next(t0 + 2s, 100, 5000);
  pacing.reset();
  EXPECT_EQ(pacing.next(t0 + 4s, 100, 5000), kFarReadFirst);
}

TEST(FarPacing, JitterMovesADelayByAtMostAFifth) {
  EXPECT_EQ(jittered(10s, 0), 8s);
  const auto most = jittered(10s, std::numeric_limits<std::uint32_t>::max());
  EXPECT_LT(most, 12s);
  EXPECT_GT(most, 11900ms);
  EXPECT_EQ(jittered(10s, 1u << 31), 10s);
}

}  // namespace
