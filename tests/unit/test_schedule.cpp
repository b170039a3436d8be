#include "schedule.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <set>
#include <string>

namespace trimd {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::minutes;

// 2024-03-04 00:00:00 UTC, a Monday.
const TimePoint kMondayUtc = from_usec(1'709'510'400LL * 1'000'000);

TimePoint monday_at(int hour, int minute = 0) { return kMondayUtc + hours{hour} + minutes{minute}; }

constexpr int at(int hour, int minute = 0) { return hour * 60 + minute; }

// Sets TZ for one test and restores whatever was there before.
class ScopedTimeZone {
 public:
  explicit ScopedTimeZone(const char* tz) {
    if (const char* old = std::getenv("TZ")) saved_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~ScopedTimeZone() {
    if (saved_)
      setenv("TZ", saved_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  ScopedTimeZone(const ScopedTimeZone&) = delete;
  ScopedTimeZone& operator=(const ScopedTimeZone&) = delete;

 private:
  std::optional<std::string> saved_;
};

class Schedule : public ::testing::Test {
 protected:
  ScopedTimeZone utc_{"UTC"};
  SchedulePolicy policy;  // weekly, 1 h randomized delay, 2 min first delay, 24 h grace
};

TEST_F(Schedule, IsDueOneIntervalAfterTheLastPassWithoutJitter) {
  EXPECT_EQ(next_due(policy, kMondayUtc, kMondayUtc, 0.0), kMondayUtc + hours{24 * 7});
}

TEST_F(Schedule, SpreadsTheDueTimeOverTheRandomizedDelay) {
  EXPECT_EQ(next_due(policy, kMondayUtc, kMondayUtc, 0.5),
            kMondayUtc + hours{24 * 7} + minutes{30});
  const TimePoint latest = next_due(policy, kMondayUtc, kMondayUtc, 0.999999);
  EXPECT_LT(latest, kMondayUtc + hours{24 * 7 + 1});
  EXPECT_GT(latest, kMondayUtc + hours{24 * 7} + minutes{59});
}

TEST_F(Schedule, ClampsJitterOutsideItsRange) {
  const TimePoint base = kMondayUtc + hours{24 * 7};
  EXPECT_EQ(next_due(policy, kMondayUtc, kMondayUtc, -3.0), base);
  EXPECT_LT(next_due(policy, kMondayUtc, kMondayUtc, 7.0), base + hours{1});
  EXPECT_GE(next_due(policy, kMondayUtc, kMondayUtc, 7.0), base + minutes{59});
}

TEST_F(Schedule, IsDueShortlyAfterStartWhenNeverTrimmed) {
  const TimePoint started = monday_at(10);
  EXPECT_EQ(next_due(policy, std::nullopt, started, 0.0), started + minutes{2});
  // The spread is capped by the first delay, not the hour of randomized delay.
  EXPECT_EQ(next_due(policy, std::nullopt, started, 0.5), started + minutes{3});
}

TEST_F(Schedule, SpreadsAFirstPassOverTheRandomizedDelayWhenItIsShorter) {
  policy.randomized_delay = minutes{1};
  EXPECT_EQ(next_due(policy, std::nullopt, monday_at(10), 0.5),
            monday_at(10) + minutes{2} + std::chrono::seconds{30});
}

TEST_F(Schedule, MovesTheDueTimeIntoTheWindow) {
  policy.window = TimeWindow{at(22), at(6)};
  // Last pass ended Monday 12:00: due the next Monday 12:00, which is outside.
  EXPECT_EQ(next_due(policy, monday_at(12), kMondayUtc, 0.0), monday_at(24 * 7 + 22));
  // Due inside the window: unchanged.
  EXPECT_EQ(next_due(policy, monday_at(23), kMondayUtc, 0.0), monday_at(24 * 7 + 23));
}

TEST_F(Schedule, IsAlwaysInWindowWithoutOneOrWithAnAllDayWindow) {
  EXPECT_TRUE(in_window(std::nullopt, monday_at(3, 17)));
  EXPECT_TRUE(in_window(TimeWindow{at(4), at(4)}, monday_at(3, 17)));
  EXPECT_TRUE(in_window(TimeWindow{at(4), at(4)}, monday_at(4)));
}

TEST_F(Schedule, TreatsADaytimeWindowAsHalfOpen) {
  const TimeWindow office{at(9), at(17)};
  EXPECT_FALSE(in_window(office, monday_at(8, 59)));
  EXPECT_TRUE(in_window(office, monday_at(9)));
  EXPECT_TRUE(in_window(office, monday_at(16, 59)));
  EXPECT_FALSE(in_window(office, monday_at(17)));
}

TEST_F(Schedule, HandlesAWindowThatWrapsMidnight) {
  const TimeWindow night{at(22), at(6)};
  EXPECT_FALSE(in_window(night, monday_at(21, 59)));
  EXPECT_TRUE(in_window(night, monday_at(22)));
  EXPECT_TRUE(in_window(night, monday_at(23, 30)));
  EXPECT_TRUE(in_window(night, monday_at(3)));
  EXPECT_FALSE(in_window(night, monday_at(6)));
  EXPECT_FALSE(in_window(night, monday_at(12)));
}

TEST_F(Schedule, ReadsTwentyFourHundredAsMidnight) {
  const TimeWindow late{at(22), at(24)};
  EXPECT_TRUE(in_window(late, monday_at(23, 59)));
  EXPECT_FALSE(in_window(late, monday_at(0, 30)));
}

TEST_F(Schedule, FindsTheNextWindowStart) {
  const TimeWindow night{at(22), at(6)};
  EXPECT_EQ(next_window_start(std::nullopt, monday_at(12)), monday_at(12));
  EXPECT_EQ(next_window_start(night, monday_at(3)), monday_at(3));
  EXPECT_EQ(next_window_start(night, monday_at(12)), monday_at(22));
  const TimeWindow office{at(9, 30), at(17)};
  EXPECT_EQ(next_window_start(office, monday_at(7)), monday_at(9, 30));
  EXPECT_EQ(next_window_start(office, monday_at(18)), monday_at(24 + 9, 30));
}

TEST_F(Schedule, FindsTheWindowStartFromMidMinute) {
  const TimeWindow office{at(9), at(17)};
  const TimePoint late = monday_at(17) + microseconds{1'500'000};
  EXPECT_EQ(next_window_start(office, late), monday_at(24 + 9));
}

TEST(ScheduleLocalTime, FollowsTheLocalTimeZone) {
  const ScopedTimeZone zone("XYZ-2");  // POSIX: two hours east of UTC
  const TimeWindow late{at(22), at(23)};
  EXPECT_TRUE(in_window(late, monday_at(20, 30)));
  EXPECT_FALSE(in_window(late, monday_at(22, 30)));
  EXPECT_EQ(next_window_start(late, monday_at(12)), monday_at(20));
}

TEST(ScheduleLocalTime, KeepsTheLocalStartAcrossADaylightSavingChange) {
  // Central Europe; on 2024-03-31 clocks go from 02:00 CET to 03:00 CEST.
  const ScopedTimeZone zone("CET-1CEST,M3.5.0,M10.5.0/3");
  const TimePoint saturday_2300_utc = kMondayUtc + hours{24 * 26 + 23};  // Sunday 00:00 CET
  const TimeWindow early{at(4), at(5)};
  // 04:00 CEST is 02:00 UTC, not the 03:00 UTC that 04:00 CET would be.
  EXPECT_EQ(next_window_start(early, saturday_2300_utc), saturday_2300_utc + hours{3});
}

TEST_F(Schedule, IsOverdueFromTheEndOfTheGracePeriod) {
  const TimePoint due = monday_at(12);
  EXPECT_FALSE(is_overdue(policy, due, due));
  EXPECT_FALSE(is_overdue(policy, due, due + hours{24} - microseconds{1}));
  EXPECT_TRUE(is_overdue(policy, due, due + hours{24}));
  EXPECT_TRUE(is_overdue(policy, due, due + hours{48}));
}

// F6: durations parse far beyond what a TimePoint can hold.
const Duration kHugeDuration = hours{24 * 100000};  // "100000d"

TEST_F(Schedule, NeverCallsAFilesystemOverdueForAnEnormousGracePeriod) {
  policy.overdue_grace = kHugeDuration;
  const TimePoint due = monday_at(12);
  EXPECT_FALSE(is_overdue(policy, due, due + hours{24 * 365}));
  policy.overdue_grace = Duration::max();
  EXPECT_FALSE(is_overdue(policy, due, due + hours{24 * 365}));
}

TEST_F(Schedule, PutsAnEnormousFirstDelayAtTheEndOfTimeNotInThePast) {
  policy.first_delay = kHugeDuration;
  policy.randomized_delay = kHugeDuration;
  EXPECT_EQ(next_due(policy, std::nullopt, kMondayUtc, 0.5), TimePoint::max());
}

TEST_F(Schedule, SaturatesALastPassAtTheEndOfTime) {
  policy.interval = kHugeDuration;
  EXPECT_EQ(next_due(policy, from_usec(INT64_MAX), kMondayUtc, 0.9), TimePoint::max());
  EXPECT_EQ(next_due(policy, kMondayUtc, kMondayUtc, 0.0), TimePoint::max());
}

TEST_F(Schedule, KeepsAWindowOnADueTimeAtTheEndOfTime) {
  policy.interval = kHugeDuration;
  policy.window = TimeWindow{at(1), at(6)};
  EXPECT_GE(next_due(policy, kMondayUtc, kMondayUtc, 0.0), kMondayUtc + hours{24 * 365 * 200});
}

TEST(SaturatingTime, AddsLikeChronoInsideTheRange) {
  EXPECT_EQ(saturating_add(kMondayUtc, hours{1}), kMondayUtc + hours{1});
  EXPECT_EQ(saturating_sub(kMondayUtc, hours{1}), kMondayUtc - hours{1});
  EXPECT_EQ(saturating_add(kMondayUtc, Duration{-5}), kMondayUtc - microseconds{5});
}

TEST(SaturatingTime, StopsAtTheEndsOfTheRange) {
  EXPECT_EQ(saturating_add(kMondayUtc, Duration::max()), TimePoint::max());
  EXPECT_EQ(saturating_add(kMondayUtc, Duration::min()), TimePoint::min());
  EXPECT_EQ(saturating_add(TimePoint::max(), microseconds{1}), TimePoint::max());
  EXPECT_EQ(saturating_sub(TimePoint::min(), microseconds{1}), TimePoint::min());
  EXPECT_EQ(saturating_sub(kMondayUtc, Duration::min()), TimePoint::max());
}

TEST(SaturatingTime, ReadsMicrosecondsBeyondTheRangeAsItsEnds) {
  EXPECT_EQ(from_usec(INT64_MAX), TimePoint::max());
  EXPECT_EQ(from_usec(INT64_MIN), TimePoint::min());
  EXPECT_EQ(to_usec(from_usec(1'709'510'400'000'000)), 1'709'510'400'000'000);
}

TEST(StableJitter, GivesTheSameValueForTheSameInput) {
  EXPECT_EQ(stable_jitter("fs-1234", 42), stable_jitter("fs-1234", 42));
}

TEST(StableJitter, ChangesWithTheKeyAndTheSalt) {
  EXPECT_NE(stable_jitter("fs-1234", 42), stable_jitter("fs-1235", 42));
  EXPECT_NE(stable_jitter("fs-1234", 42), stable_jitter("fs-1234", 43));
}

TEST(StableJitter, SpreadsValuesOverTheUnitInterval) {
  constexpr int kSamples = 2000;
  double sum = 0;
  std::set<int> tenths;
  for (int i = 0; i < kSamples; ++i) {
    const double j = stable_jitter("fs-" + std::to_string(i), 1'709'510'400'000'000LL);
    ASSERT_GE(j, 0.0);
    ASSERT_LT(j, 1.0);
    sum += j;
    tenths.insert(static_cast<int>(j * 10));
  }
  EXPECT_NEAR(sum / kSamples, 0.5, 0.05);
  EXPECT_EQ(tenths.size(), 10u);
}

}  // namespace
}  // namespace trimd
