// The bytes a chunk discarded, counted on the filesystem's own devices and
// only once its discards have completed.
#include "discard_meter.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trimd {
namespace {

constexpr std::uint64_t kSector = kDiskstatsSectorBytes;

DiskStat device(const std::string& name, std::uint64_t sectors_discarded,
                std::uint64_t in_flight = 0) {
  DiskStat stat;
  stat.name = name;
  stat.counters.sectors_discarded = sectors_discarded;
  stat.counters.in_flight = in_flight;
  return stat;
}

// loop0 carries two partitions: the kernel adds a partition's discards to
// its disk as well, so the disk's counter is the sum of both.
std::vector<DiskStat> shared_disk(std::uint64_t p1, std::uint64_t p2,
                                  std::uint64_t p1_in_flight = 0) {
  return {device("loop0", p1 + p2, p1_in_flight), device("loop0p1", p1, p1_in_flight),
          device("loop0p2", p2)};
}

TEST(DiscardMeter, CountsOnlyItsOwnPartitionOfASharedDisk) {
  DiscardMeter meter({"loop0p1"}, shared_disk(100, 1000));
  EXPECT_TRUE(meter.settled(shared_disk(150, 9000)));
  EXPECT_EQ(meter.bytes(), 50 * kSector);
}

TEST(DiscardMeter, WaitsForDiscardsStillInFlightWhenTheCallReturned) {
  DiscardMeter meter({"loop0p1"}, shared_disk(0, 0));
  EXPECT_FALSE(meter.settled(shared_disk(400, 0, /*p1_in_flight=*/3)));
  EXPECT_EQ(meter.bytes(), 400 * kSector);  // so far
  EXPECT_FALSE(meter.settled(shared_disk(700, 0, 1)));
  EXPECT_TRUE(meter.settled(shared_disk(1000, 0, 0)));
  EXPECT_EQ(meter.bytes(), 1000 * kSector);
}

TEST(DiscardMeter, IgnoresIOInFlightOnAnotherPartitionOfTheDisk) {
  DiscardMeter meter({"loop0p2"}, shared_disk(0, 0));
  EXPECT_TRUE(meter.settled(shared_disk(0, 64, /*p1_in_flight=*/5)));
  EXPECT_EQ(meter.bytes(), 64 * kSector);
}

TEST(DiscardMeter, SumsEveryDeviceOfAMultiDeviceFilesystem) {
  DiscardMeter meter({"loop3", "loop4"}, {device("loop3", 10), device("loop4", 20)});
  EXPECT_FALSE(meter.settled({device("loop3", 30), device("loop4", 25, 1)}));
  EXPECT_TRUE(meter.settled({device("loop3", 30), device("loop4", 60)}));
  EXPECT_EQ(meter.bytes(), (20 + 40) * kSector);
}

TEST(DiscardMeter, MeasuresNothingWhenADeviceIsMissingBeforeTheCall) {
  DiscardMeter meter({"dm-0"}, shared_disk(0, 0));
  EXPECT_TRUE(meter.settled({device("dm-0", 100)}));
  EXPECT_EQ(meter.bytes(), std::nullopt);
}

TEST(DiscardMeter, MeasuresNothingWhenADeviceVanishesOrItsCountersGoBack) {
  DiscardMeter gone({"loop0p1"}, shared_disk(100, 0));
  EXPECT_TRUE(gone.settled({device("loop0", 500)}));
  EXPECT_EQ(gone.bytes(), std::nullopt);

  DiscardMeter recreated({"loop0p1"}, shared_disk(100, 0));
  EXPECT_TRUE(recreated.settled(shared_disk(20, 0)));
  EXPECT_EQ(recreated.bytes(), std::nullopt);
}

TEST(DiscardMeter, MeasuresNothingWithoutDevices) {
  DiscardMeter meter({}, shared_disk(0, 0));
  EXPECT_TRUE(meter.settled(shared_disk(10, 10)));
  EXPECT_EQ(meter.bytes(), std::nullopt);
}

DiskStat timed(const std::string& name, std::uint64_t discards, std::uint64_t ms,
               std::uint64_t in_flight = 0) {
  DiskStat stat = device(name, discards * 8, in_flight);
  stat.counters.discards_completed = discards;
  stat.counters.ms_discarding = ms;
  return stat;
}

TEST(DiscardMeter, CountsTheDiscardsAndTheTimeTheyTookUntilTheyComplete) {
  DiscardMeter meter({"loop0p1"}, {timed("loop0p1", 100, 250), timed("loop0p2", 0, 0)});
  EXPECT_FALSE(meter.settled({timed("loop0p1", 400, 850, 2), timed("loop0p2", 50, 900)}));
  EXPECT_TRUE(meter.settled({timed("loop0p1", 600, 1250), timed("loop0p2", 90, 2000)}));
  EXPECT_EQ(meter.discards(), 500u);
  EXPECT_EQ(meter.discard_time(), std::chrono::milliseconds{1000}) << "only its own partition's";
}

TEST(DiscardMeter, SaysNothingOfTheTimeOnADeviceThatCountsNoDiscards) {
  // zram, for one: bytes are gone, no discard is counted.
  DiscardMeter meter({"zram0"}, {timed("zram0", 0, 0)});
  EXPECT_TRUE(meter.settled({timed("zram0", 0, 0)}));
  EXPECT_EQ(meter.discards(), 0u);
  EXPECT_EQ(meter.discard_time(), std::nullopt);
}

TEST(DiscardMeter, CountsNoTimeForACallThatDiscardedNothingOnADeviceThatCounts) {
  DiscardMeter meter({"sda1"}, {timed("sda1", 70, 140)});
  EXPECT_TRUE(meter.settled({timed("sda1", 70, 140)}));
  EXPECT_EQ(meter.discard_time(), std::chrono::milliseconds{0});
}

TEST(DiscardMeter, SaysNothingOfTheTimeWhenTheCountersGoBack) {
  DiscardMeter meter({"sda1"}, {timed("sda1", 70, 140)});
  EXPECT_TRUE(meter.settled({timed("sda1", 80, 100)}));
  EXPECT_EQ(meter.discard_time(), std::nullopt);
  EXPECT_EQ(meter.bytes(), std::nullopt);
}

}  // namespace
}  // namespace trimd
