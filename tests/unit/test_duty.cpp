// The duty budget's arithmetic (lib/policy/duty.hpp): whose budget applies,
// what a chunk cost the device, and how long the pause after it is.
#include "duty.hpp"

#include <gtest/gtest.h>

using namespace trimd;
using namespace std::chrono_literals;

TEST(DutyBudget, IsNoneWhenNeitherTheHostNorTheFleetSetsOne) {
  EXPECT_EQ(duty_budget(0, "sda", 0, 1, "pool-a").share, 0.0);
  EXPECT_EQ(duty_budget(0, "sda", 0.01, 1, "").share, 0.0) << "not coordinated: no fleet budget";
}

TEST(DutyBudget, IsAShareOfTheDisksOrOfTheBackend) {
  EXPECT_EQ(duty_budget(0.02, "sda", 0, 1, ""), (DutyBudget{0.02, "sda"}));
  EXPECT_EQ(duty_budget(0, "sda", 0.01, 1, "pool-a"), (DutyBudget{0.01, "pool-a"}));
}

TEST(DutyBudget, SplitsTheFleetsShareAmongTheSlots) {
  EXPECT_EQ(duty_budget(0, "sda", 0.01, 2, "pool-a"), (DutyBudget{0.005, "pool-a"}));
  EXPECT_EQ(duty_budget(0, "sda", 0.16, 16, "pool-a").share, 0.01);
}

TEST(DutyBudget, TheStricterOfTheTwoApplies) {
  EXPECT_EQ(duty_budget(0.002, "sda", 0.01, 2, "pool-a"), (DutyBudget{0.002, "sda"}));
  EXPECT_EQ(duty_budget(0.02, "sda", 0.01, 2, "pool-a"), (DutyBudget{0.005, "pool-a"}));
}

TEST(DutyPause, LeavesTheDeviceBusyForItsShareOfTheTime) {
  EXPECT_EQ(duty_pause(2s, 0.01), 198s) << "2 s of discards at 1%: 200 s from start to start";
  EXPECT_EQ(duty_pause(1s, 0.10), 9s);
  EXPECT_EQ(duty_pause(500ms, 0.5), 500ms);
  for (const Duration busy : {Duration{3ms}, Duration{1s}, Duration{17s}}) {
    const Duration pause = duty_pause(busy, 0.02);
    EXPECT_NEAR(static_cast<double>(busy.count()) / static_cast<double>((busy + pause).count()),
                0.02, 1e-6);
  }
}

TEST(DutyPause, IsNothingWithoutABudgetAtAWholeShareOrAfterNoDeviceTime) {
  EXPECT_EQ(duty_pause(2s, 0), 0s);
  EXPECT_EQ(duty_pause(2s, 1.0), 0s);
  EXPECT_EQ(duty_pause(0s, 0.01), 0s);
  EXPECT_EQ(duty_pause(-1s, 0.01), 0s);
}

TEST(DutyPause, IsBoundedByADay) {
  EXPECT_EQ(duty_pause(10min, kMinDuty), kMaxDutyPause) << "a stuck call at 0.01%: 69 days";
  EXPECT_EQ(kMaxDutyPause, 24h);
}

TEST(ChunkDeviceTime, IsTheDiscardTimeTheDevicesCountedButNeverMoreThanTheChunksSpan) {
  EXPECT_EQ(chunk_device_time(2s, Duration{1500ms}), 1500ms);
  EXPECT_EQ(chunk_device_time(2s, Duration{5s}), 2s) << "discards in flight side by side";
  EXPECT_EQ(chunk_device_time(2s, Duration{0}), 0s) << "counted, and nothing discarded";
}

TEST(ChunkDeviceTime, IsTheChunksSpanWhereTheDevicesCountNoDiscards) {
  EXPECT_EQ(chunk_device_time(2s, std::nullopt), 2s);
  EXPECT_EQ(chunk_device_time(-1s, std::nullopt), 0s);
}

TEST(PacingText, SaysWhoseTimeAndWhenTheNextChunkComes) {
  EXPECT_EQ(pacing_text(DutyBudget{0.01, "pool-a"}, 192s),
            "pacing: 1% of pool-a's time, next chunk in 3min 12s");
  EXPECT_EQ(pacing_text(DutyBudget{0.005, "sda"}, 1500ms),
            "pacing: 0.5% of sda's time, next chunk in 2s")
      << "rounded up to whole seconds";
  EXPECT_EQ(pacing_text(DutyBudget{0.02, "pool-a"}, 12s, "slot handed on"),
            "pacing: 2% of pool-a's time, slot handed on in 12s");
  EXPECT_EQ(pacing_text(DutyBudget{0.02, "sda"}, -3s),
            "pacing: 2% of sda's time, next chunk in 0s");
}
