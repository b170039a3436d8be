#include "diskstats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace trimd {
namespace {

std::string read_data_file(const std::string& name) {
  std::ifstream in(std::string(TRIMD_TEST_DATA) + "/" + name);
  EXPECT_TRUE(in) << "missing test data " << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t count_nonblank_lines(const std::string& text) {
  std::istringstream in(text);
  std::size_t count = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t") != std::string::npos) ++count;
  return count;
}

const DiskStat* find_disk(const std::vector<DiskStat>& stats, const std::string& name) {
  const auto it =
      std::find_if(stats.begin(), stats.end(), [&](const DiskStat& s) { return s.name == name; });
  return it == stats.end() ? nullptr : &*it;
}

TEST(DiskstatsParser, ReadsEveryDeviceOfThisMachinesTwentyFieldCapture) {
  const std::string text = read_data_file("diskstats-this-machine.txt");
  const auto stats = parse_diskstats(text);
  EXPECT_EQ(stats.size(), count_nonblank_lines(text));
  const DiskStat* vda = find_disk(stats, "vda");
  ASSERT_NE(vda, nullptr);
  EXPECT_EQ(vda->major, 254u);
  EXPECT_EQ(vda->minor, 0u);
  EXPECT_EQ(vda->counters.reads_completed, 32611u);
  EXPECT_EQ(vda->counters.sectors_written, 938280u);
  EXPECT_EQ(vda->counters.weighted_ms, 15405u);
  EXPECT_EQ(vda->counters.discards_completed, 8627u);
  EXPECT_EQ(vda->counters.sectors_discarded, 495413776u);
  EXPECT_EQ(vda->counters.ms_discarding, 526u);
  EXPECT_EQ(vda->counters.flushes_completed, 2274u);
  EXPECT_EQ(vda->counters.ms_flushing, 84u);
}

TEST(DiskstatsParser, LeavesDiscardAndFlushCountersAtZeroOnFourteenFieldKernels) {
  const auto stats = parse_diskstats(read_data_file("diskstats-kernel-4.14-14fields.txt"));
  ASSERT_EQ(stats.size(), 6u);
  const DiskStat* sdb = find_disk(stats, "sdb");
  ASSERT_NE(sdb, nullptr);
  EXPECT_EQ(sdb->major, 8u);
  EXPECT_EQ(sdb->minor, 16u);
  EXPECT_EQ(sdb->counters.reads_completed, 90312u);
  EXPECT_EQ(sdb->counters.reads_merged, 12u);
  EXPECT_EQ(sdb->counters.sectors_read, 5834210u);
  EXPECT_EQ(sdb->counters.ms_reading, 98120u);
  EXPECT_EQ(sdb->counters.writes_completed, 450u);
  EXPECT_EQ(sdb->counters.writes_merged, 1290u);
  EXPECT_EQ(sdb->counters.sectors_written, 17360u);
  EXPECT_EQ(sdb->counters.ms_writing, 2104u);
  EXPECT_EQ(sdb->counters.in_flight, 3u);
  EXPECT_EQ(sdb->counters.io_ticks_ms, 64020u);
  EXPECT_EQ(sdb->counters.weighted_ms, 100216u);
  for (const DiskStat& s : stats) {
    EXPECT_EQ(s.counters.discards_completed, 0u) << s.name;
    EXPECT_EQ(s.counters.sectors_discarded, 0u) << s.name;
    EXPECT_EQ(s.counters.flushes_completed, 0u) << s.name;
  }
}

TEST(DiskstatsParser, ReadsDiscardCountersButNoFlushesOnEighteenFieldKernels) {
  const auto stats = parse_diskstats(read_data_file("diskstats-kernel-5.4-18fields.txt"));
  ASSERT_EQ(stats.size(), 3u);
  const DiskStat* sda = find_disk(stats, "sda");
  ASSERT_NE(sda, nullptr);
  EXPECT_EQ(sda->counters.discards_completed, 20514u);
  EXPECT_EQ(sda->counters.discards_merged, 2u);
  EXPECT_EQ(sda->counters.sectors_discarded, 41051384u);
  EXPECT_EQ(sda->counters.ms_discarding, 4912u);
  EXPECT_EQ(sda->counters.flushes_completed, 0u);
  EXPECT_EQ(sda->counters.ms_flushing, 0u);
}

TEST(DiskstatsParser, KeepsDevicesInFileOrder) {
  const auto stats = parse_diskstats(read_data_file("diskstats-kernel-4.14-14fields.txt"));
  ASSERT_EQ(stats.size(), 6u);
  EXPECT_EQ(stats.front().name, "sda");
  EXPECT_EQ(stats[1].name, "sda1");
  EXPECT_EQ(stats.back().name, "loop0");
}

TEST(DiskstatsParser, SkipsLinesWithTooFewFields) {
  const auto stats = parse_diskstats(
      "   8 0 sda 1 2 3 4 5 6 7 8 9 10\n"      // 13 fields: one counter short
      "   8 16 sdb 1 2 3 4 5 6 7 8 9 10 11\n"  // 14 fields
      "\n"
      "garbage\n");
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].name, "sdb");
  EXPECT_EQ(stats[0].counters.weighted_ms, 11u);
}

TEST(DiskstatsParser, SkipsLinesWithNonNumericCounters) {
  const auto stats = parse_diskstats(
      "8 0 sda 1 2 3 4 5 6 7 x 9 10 11\n"
      "8 1 sda1 1 2 3 4 5 6 7 8x 9 10 11\n"
      "8 2 sda2 1 2 3 4 5 6 7 -8 9 10 11\n"
      "8 3 sda3 1 2 3 4 5 6 7 8 9 10 11 1 2 3 four\n"
      "x 4 sda4 1 2 3 4 5 6 7 8 9 10 11\n"
      "8 5 sda5 1 2 3 4 5 6 7 8 9 10 11\n");
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].name, "sda5");
}

TEST(DiskstatsParser, SkipsCountersTooLargeForSixtyFourBits) {
  const std::string max = std::to_string(std::numeric_limits<std::uint64_t>::max());
  const auto stats = parse_diskstats("8 0 sda " + max + " 0 0 0 0 0 0 0 0 0 0\n" + "8 1 sdb " +
                                     max + "0 0 0 0 0 0 0 0 0 0 0\n");
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].counters.reads_completed, std::numeric_limits<std::uint64_t>::max());
}

TEST(DiskstatsParser, AcceptsTabsCarriageReturnsAndAMissingFinalNewline) {
  const auto stats = parse_diskstats(
      "8\t0\tsda 1 2 3 4 5 6 7 8 9 10 11\r\n"
      "  8 16 sdb 1 2 3 4 5 6 7 8 9 10 12");
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].counters.weighted_ms, 11u);
  EXPECT_EQ(stats[1].counters.weighted_ms, 12u);
}

TEST(DiskstatsParser, IgnoresCountersAddedByFutureKernels) {
  const auto stats =
      parse_diskstats("259 0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n");
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].counters.ms_flushing, 17u);
}

TEST(DiskstatsParser, ReturnsNothingForEmptyText) { EXPECT_TRUE(parse_diskstats("").empty()); }

}  // namespace
}  // namespace trimd
