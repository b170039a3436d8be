#include "idleness.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace trimd {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const TimePoint kT0 = from_usec(1'700'000'000'000'000);

// The default limits (20 iops, 1 MiB/s, 5 %) with a 30 s window: the
// arithmetic of the tests below.
IdleThresholds limits_with_a_30s_window() {
  IdleThresholds limits;
  limits.idle_window = seconds{30};
  return limits;
}

// One disk whose counters tests drive like the kernel would.
struct FakeDisk {
  std::string name;
  DiskCounters c;

  void read(std::uint64_t ops, std::uint64_t sectors, std::uint64_t ms) {
    c.reads_completed += ops;
    c.sectors_read += sectors;
    c.ms_reading += ms;
    c.io_ticks_ms += ms;
  }
  void write(std::uint64_t ops, std::uint64_t sectors, std::uint64_t ms) {
    c.writes_completed += ops;
    c.sectors_written += sectors;
    c.ms_writing += ms;
    c.io_ticks_ms += ms;
  }
  // What trimd's own FITRIM looks like in /proc/diskstats.
  void discard(std::uint64_t ops, std::uint64_t sectors, std::uint64_t ms) {
    c.discards_completed += ops;
    c.sectors_discarded += sectors;
    c.ms_discarding += ms;
    c.io_ticks_ms += ms;
    c.weighted_ms += ms;
    c.in_flight = ops;
  }
  DiskStat stat() const { return DiskStat{7, 0, name, c}; }
};

std::vector<DiskStat> sample_of(const std::vector<const FakeDisk*>& disks) {
  std::vector<DiskStat> sample;
  for (const FakeDisk* d : disks) sample.push_back(d->stat());
  return sample;
}

class IdlenessModelTest : public ::testing::Test {
 protected:
  void observe(Duration since_t0) { model.observe(sample_of({&disk}), kT0 + since_t0); }
  // The activity over one 10 s interval in which `load` happened.
  template <typename Load>
  DiskActivity activity_over_ten_seconds(Load load) {
    observe(seconds{0});
    load(disk);
    observe(seconds{10});
    const auto a = model.activity(disk.name);
    EXPECT_TRUE(a.has_value());
    return a.value_or(DiskActivity{});
  }

  IdlenessModel model{limits_with_a_30s_window()};
  FakeDisk disk{"loop0", {}};
};

TEST(IdleThresholdsDefaults, TheWindowOutlastsTheKernelsWritesAfterABurst) {
  // Dirty metadata goes out 30 s (dirty_expire) + up to 5 s (the flusher's
  // period) after a burst; a window ending before that starts a pass those
  // writes interrupt at once (measured, docs/preemption.md).
  EXPECT_GT(IdleThresholds{}.idle_window, seconds{35});
}

TEST_F(IdlenessModelTest, ADiskNeverSeenIsNotIdle) {
  EXPECT_FALSE(model.disk_idle("loop0", kT0));
  EXPECT_FALSE(model.quiet_since("loop0").has_value());
  EXPECT_FALSE(model.counters("loop0").has_value());
}

TEST_F(IdlenessModelTest, AssumesANewDiskQuietFromItsFirstSample) {
  observe(seconds{0});
  EXPECT_EQ(model.quiet_since(disk.name), kT0);
  EXPECT_FALSE(model.activity(disk.name).has_value());
}

TEST_F(IdlenessModelTest, BecomesIdleExactlyWhenTheWindowHasPassed) {
  for (int s = 0; s <= 30; s += 10) observe(seconds{s});
  EXPECT_FALSE(model.disk_idle(disk.name, kT0 + seconds{30} - milliseconds{1}));
  EXPECT_TRUE(model.disk_idle(disk.name, kT0 + seconds{30}));
}

TEST_F(IdlenessModelTest, ActivityResetsTheQuietPeriod) {
  observe(seconds{0});
  observe(seconds{10});
  disk.write(500, 8000, 400);
  observe(seconds{20});
  EXPECT_TRUE(model.activity(disk.name)->active);
  EXPECT_FALSE(model.quiet_since(disk.name).has_value());
  EXPECT_FALSE(model.disk_idle(disk.name, kT0 + seconds{40}));

  observe(seconds{30});
  EXPECT_EQ(model.quiet_since(disk.name), kT0 + seconds{30});
  EXPECT_FALSE(model.disk_idle(disk.name, kT0 + seconds{59}));
  EXPECT_TRUE(model.disk_idle(disk.name, kT0 + seconds{60}));
}

TEST_F(IdlenessModelTest, KeepsTheStartOfAQuietPeriodAcrossQuietSamples) {
  observe(seconds{0});
  disk.read(1000, 0, 0);
  observe(seconds{10});
  observe(seconds{20});
  observe(seconds{30});
  EXPECT_EQ(model.quiet_since(disk.name), kT0 + seconds{20});
}

TEST_F(IdlenessModelTest, ComputesRatesFromCounterDeltas) {
  const DiskActivity a = activity_over_ten_seconds([](FakeDisk& d) {
    d.read(100, 2048, 250);
    d.write(50, 4096, 150);
  });
  EXPECT_DOUBLE_EQ(a.read_iops, 10.0);
  EXPECT_DOUBLE_EQ(a.write_iops, 5.0);
  EXPECT_DOUBLE_EQ(a.read_bytes_per_sec, 2048.0 * 512 / 10);
  EXPECT_DOUBLE_EQ(a.write_bytes_per_sec, 4096.0 * 512 / 10);
  EXPECT_DOUBLE_EQ(a.busy_fraction, 400.0 / 10'000);
  EXPECT_FALSE(a.active);
}

TEST_F(IdlenessModelTest, OwnDiscardsDoNotCountAsActivity) {
  observe(seconds{0});
  for (int s = 10; s <= 40; s += 10) {
    disk.discard(64, 1u << 21, 9'000);  // 1 GiB per 10 s, disk "busy" 90 % of the time
    observe(seconds{s});
    const auto a = model.activity(disk.name);
    ASSERT_TRUE(a.has_value());
    EXPECT_FALSE(a->active) << "at " << s << " s";
    EXPECT_EQ(a->in_flight, 64u);
  }
  EXPECT_TRUE(model.disk_idle(disk.name, kT0 + seconds{40}));
  EXPECT_EQ(model.counters(disk.name)->sectors_discarded, 4u << 21);
}

// With a 200 ms sample interval, ext4's bitmap reads for one FITRIM crossed
// max_iops and trimd paused itself: the runner's own bytes are taken out.
TEST_F(IdlenessModelTest, TrimdsOwnBitmapReadsNeverMakeADiskLookBusy) {
  model.observe(sample_of({&disk}), kT0);
  disk.read(40, 40 * 8, 30);  // 40 reads of 4 KiB in 200 ms: 200 iops
  disk.discard(10, 2048, 150);
  const std::map<std::string, IoBytes> own{{"loop0", IoBytes{40 * 4096, 0}}};
  model.observe(sample_of({&disk}), kT0 + milliseconds{200}, own);
  EXPECT_FALSE(model.activity(disk.name)->active);
  EXPECT_EQ(model.quiet_since(disk.name), kT0);

  disk.read(40, 40 * 8, 30);  // the same reads, but nobody claims them
  model.observe(sample_of({&disk}), kT0 + milliseconds{400});
  EXPECT_TRUE(model.activity(disk.name)->active);
  EXPECT_EQ(model.first_busy({disk.name}, kT0 + milliseconds{400})->limit, IdleLimit::Iops);
}

TEST_F(IdlenessModelTest, AfterAPreemptionTheDiskWaitsAWholeWindowAgain) {
  for (int s = 0; s <= 30; s += 10) observe(seconds{s});
  ASSERT_TRUE(model.disk_idle(disk.name, kT0 + seconds{30}));
  model.mark_busy({disk.name}, kT0 + seconds{30});
  EXPECT_FALSE(model.disk_idle(disk.name, kT0 + seconds{31}));
  observe(seconds{31});
  EXPECT_FALSE(model.disk_idle(disk.name, kT0 + seconds{60}));
  EXPECT_TRUE(model.disk_idle(disk.name, kT0 + seconds{61}));
}

TEST_F(IdlenessModelTest, IopsExactlyAtTheThresholdAreQuiet) {
  EXPECT_FALSE(activity_over_ten_seconds([](FakeDisk& d) {
                 d.read(120, 0, 0);
                 d.write(80, 0, 0);
               }).active);
}

TEST_F(IdlenessModelTest, IopsAboveTheThresholdAreActive) {
  EXPECT_TRUE(activity_over_ten_seconds([](FakeDisk& d) {
                d.read(121, 0, 0);
                d.write(80, 0, 0);
              }).active);
}

TEST_F(IdlenessModelTest, ThroughputExactlyAtTheThresholdIsQuiet) {
  // 1 MiB/s for 10 s = 20480 sectors, split between reads and writes.
  EXPECT_FALSE(activity_over_ten_seconds([](FakeDisk& d) {
                 d.read(1, 10240, 0);
                 d.write(1, 10240, 0);
               }).active);
}

TEST_F(IdlenessModelTest, ThroughputAboveTheThresholdIsActive) {
  EXPECT_TRUE(activity_over_ten_seconds([](FakeDisk& d) {
                d.read(1, 10241, 0);
                d.write(1, 10240, 0);
              }).active);
}

TEST_F(IdlenessModelTest, BusyTimeExactlyAtTheThresholdIsQuiet) {
  // 5 % of 10 s = 500 ms of read + write time.
  EXPECT_FALSE(activity_over_ten_seconds([](FakeDisk& d) {
                 d.read(1, 0, 300);
                 d.write(1, 0, 200);
               }).active);
}

TEST_F(IdlenessModelTest, BusyTimeAboveTheThresholdIsActive) {
  EXPECT_TRUE(activity_over_ten_seconds([](FakeDisk& d) {
                d.read(1, 0, 300);
                d.write(1, 0, 201);
              }).active);
}

// QD32 reads for 10 s wait 32 x 10 s in all: the summed busy time passes
// the wall time, and max_busy = 1 must still mean "no limit".
TEST_F(IdlenessModelTest, MaxBusyOfOneIsNoLimitEvenWhenQueuedWaitsAddUpPastTheWallTime) {
  IdleThresholds t;
  t.max_iops = 1e9;
  t.max_bytes_per_sec = 1e15;
  t.max_busy_fraction = 1;
  model.set_thresholds(t);
  EXPECT_FALSE(
      activity_over_ten_seconds([](FakeDisk& d) { d.read(100000, 800000, 320000); }).active);
}

TEST_F(IdlenessModelTest, TreatsAReattachedDeviceWithSmallerCountersAsAReset) {
  disk.read(5'000'000, 900'000'000, 4'000'000);
  observe(seconds{0});
  disk.c = DiskCounters{};  // detached and re-attached: counters start over
  disk.read(3, 24, 1);
  observe(seconds{10});
  const auto a = model.activity(disk.name);
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(a->active);
  EXPECT_DOUBLE_EQ(a->read_iops, 0.0);
  EXPECT_DOUBLE_EQ(a->read_bytes_per_sec, 0.0);
  EXPECT_EQ(model.quiet_since(disk.name), kT0);

  // The next interval is measured from the new counters.
  disk.read(1000, 0, 0);
  observe(seconds{20});
  EXPECT_DOUBLE_EQ(model.activity(disk.name)->read_iops, 100.0);
  EXPECT_TRUE(model.activity(disk.name)->active);
}

TEST_F(IdlenessModelTest, TreatsOneWrappedCounterAsAReset) {
  disk.c.sectors_written = (1ull << 32) - 10;  // a 32-bit kernel's unsigned long
  observe(seconds{0});
  disk.c.sectors_written = 5;
  disk.write(10, 0, 0);
  observe(seconds{10});
  EXPECT_FALSE(model.activity(disk.name)->active);
  EXPECT_DOUBLE_EQ(model.activity(disk.name)->write_bytes_per_sec, 0.0);
}

TEST_F(IdlenessModelTest, DropsDisksMissingFromASample) {
  FakeDisk other{"loop1", {}};
  model.observe(sample_of({&disk, &other}), kT0);
  model.observe(sample_of({&other}), kT0 + seconds{40});
  EXPECT_FALSE(model.counters(disk.name).has_value());
  EXPECT_FALSE(model.disk_idle(disk.name, kT0 + seconds{40}));
  EXPECT_TRUE(model.disk_idle(other.name, kT0 + seconds{40}));

  // When it comes back it starts over, quiet from its reappearance.
  model.observe(sample_of({&disk, &other}), kT0 + seconds{50});
  EXPECT_EQ(model.quiet_since(disk.name), kT0 + seconds{50});
  EXPECT_FALSE(model.activity(disk.name).has_value());
}

TEST_F(IdlenessModelTest, AllIdleNeedsEveryNamedDiskIdle) {
  FakeDisk busy{"loop1", {}};
  model.observe(sample_of({&disk, &busy}), kT0);
  busy.write(1000, 0, 0);
  model.observe(sample_of({&disk, &busy}), kT0 + seconds{30});
  const TimePoint now = kT0 + seconds{30};
  EXPECT_TRUE(model.all_idle({disk.name}, now));
  EXPECT_FALSE(model.all_idle({disk.name, busy.name}, now));
  EXPECT_FALSE(model.all_idle({disk.name, "sdz"}, now));
  EXPECT_FALSE(model.all_idle({}, now));

  model.observe(sample_of({&disk, &busy}), kT0 + seconds{60});
  EXPECT_TRUE(model.all_idle({disk.name, busy.name}, kT0 + seconds{90}));
}

TEST_F(IdlenessModelTest, ASampleAtTheSameInstantChangesNothing) {
  observe(seconds{0});
  disk.write(1000, 0, 0);
  observe(seconds{10});
  observe(seconds{10});
  EXPECT_FALSE(model.quiet_since(disk.name).has_value());
  EXPECT_TRUE(model.activity(disk.name)->active);
}

TEST_F(IdlenessModelTest, NeverReportsQuietSinceAfterAClockStepBack) {
  observe(seconds{100});
  observe(seconds{50});
  EXPECT_EQ(model.quiet_since(disk.name), kT0 + seconds{50});
}

TEST_F(IdlenessModelTest, UsesNewThresholdsForLaterSamples) {
  IdleThresholds strict;
  strict.max_iops = 1.0;
  strict.idle_window = seconds{5};
  model.set_thresholds(strict);
  EXPECT_DOUBLE_EQ(model.thresholds().max_iops, 1.0);
  observe(seconds{0});
  EXPECT_TRUE(model.disk_idle(disk.name, kT0 + seconds{5}));
  disk.read(11, 0, 0);
  observe(seconds{10});
  EXPECT_TRUE(model.activity(disk.name)->active);
}

}  // namespace
}  // namespace trimd
