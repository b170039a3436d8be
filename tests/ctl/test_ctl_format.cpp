// trimctl's bus-free parts: times, bars, JSON, arguments.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <ctime>

#include "format.hpp"
#include "json.hpp"
#include "options.hpp"

using namespace trimctl;

namespace {

constexpr uint64_t kSecond = 1000000;
constexpr uint64_t kMinute = 60 * kSecond;
constexpr uint64_t kHour = 60 * kMinute;
constexpr uint64_t kDay = 24 * kHour;
// Tue 2026-12-01 09:00:00 UTC
constexpr uint64_t kNow = 1796115600ull * kSecond;

class InUtc : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

TEST(FormatRelative, SaysLeftForTheFutureAndAgoForThePast) {
  EXPECT_EQ(format_relative(kNow + 2 * kHour + 30 * kSecond, kNow), "2h left");
  EXPECT_EQ(format_relative(kNow - 3 * kDay - 5 * kMinute, kNow), "3 days ago");
  EXPECT_EQ(format_relative(kNow, kNow), "now");
}

TEST(FormatRelative, KeepsASecondUnitOnlyWhereItMatters) {
  EXPECT_EQ(format_relative(kNow + 2 * kHour + 5 * kMinute, kNow), "2h 5min left");
  EXPECT_EQ(format_relative(kNow + 7 * kHour + 5 * kMinute, kNow), "7h left");
  EXPECT_EQ(format_relative(kNow - kDay - 3 * kHour, kNow), "1 day 3h ago");
  EXPECT_EQ(format_relative(kNow - 9 * kDay, kNow), "1 week 2 days ago");
  EXPECT_EQ(format_relative(kNow - 90 * kSecond, kNow), "1min 30s ago");
  EXPECT_EQ(format_relative(kNow - 42 * kSecond, kNow), "42s ago");
}

TEST(FormatRelative, CanSayItInOneUnitRoundedToTheNearest) {
  EXPECT_EQ(format_relative(kNow + kHour + 57 * kMinute, kNow, true), "2h left");
  EXPECT_EQ(format_relative(kNow - kDay - 3 * kHour, kNow, true), "1 day ago");
  EXPECT_EQ(format_relative(kNow - 90 * kSecond, kNow, true), "2min ago");
  EXPECT_EQ(format_relative(kNow - 9 * kDay, kNow, true), "1 week ago");
}

TEST_F(InUtc, FormatTimestampShowsDayDateTimeAndZone) {
  EXPECT_EQ(format_timestamp(kNow), "Tue 2026-12-01 09:00 UTC");
  EXPECT_EQ(format_timestamp_and_relative(kNow + 2 * kHour, kNow, "never"),
            "Tue 2026-12-01 11:00 UTC; 2h left");
  EXPECT_EQ(format_timestamp_and_relative(0, kNow, "never"), "never");
  EXPECT_EQ(format_log_time(kNow + 123456), "2026-12-01 09:00:00.123");
}

TEST(FormatDuration, PicksUnitsByLength) {
  EXPECT_EQ(format_duration(420 * 1000), "420ms");
  EXPECT_EQ(format_duration(12300000), "12.3s");
  EXPECT_EQ(format_duration(4 * kMinute + 12 * kSecond), "4min 12s");
  EXPECT_EQ(format_duration(2 * kHour + 3 * kMinute), "2h 3min");
}

TEST(FormatPercent, RoundsDownSoOnlyAFinishedPassShowsAHundred) {
  EXPECT_EQ(format_percent(0.42), "42%");
  EXPECT_EQ(format_percent(0.999), "99%");
  EXPECT_EQ(format_percent(1.0), "100%");
  EXPECT_EQ(format_percent(-1), "0%");
}

TEST(ProgressBar, FillsItsWidthInProportion) {
  EXPECT_EQ(progress_bar(0, 12), "[          ]");
  EXPECT_EQ(progress_bar(0.5, 12), "[=====>    ]");
  EXPECT_EQ(progress_bar(1, 12), "[==========]");
  EXPECT_EQ(progress_bar(0.5, 12).size(), 12u);
}

TEST(Json, QuotesAndEscapesStringsAsTrimctlAlwaysDid) {
  EXPECT_EQ(json_text(Json("a\"b\\c\n\t\x01\x1f/\xc3\xa9"), JsonMode::Short),
            "\"a\\\"b\\\\c\\n\\t\\u0001\\u001f/\xc3\xa9\"");
}

TEST(Json, KeepsMembersInTheOrderTheyWereAdded) {
  const Json json{{"s", "x"},
                  {"n", uint64_t{18446744073709551615u}},
                  {"d", json_number(0.5)},
                  {"b", false},
                  {"l", std::vector<std::string>{"a", "b"}}};
  EXPECT_EQ(json_text(json, JsonMode::Short),
            R"({"s":"x","n":18446744073709551615,"d":0.5,"b":false,"l":["a","b"]})");
}

TEST(Json, WritesWholeNumbersWithoutAFractionAndNonFiniteOnesAsNull) {
  EXPECT_EQ(json_number(0).dump(), "0");
  EXPECT_EQ(json_number(1).dump(), "1");
  EXPECT_EQ(json_number(0.25).dump(), "0.25");
  EXPECT_EQ(json_number(1.0 / 3.0).dump(), "0.3333333333333333");
  EXPECT_EQ(json_number(1.0 / 0.0).dump(), "null");
  EXPECT_EQ(json_number(std::nan("")).dump(), "null");
}

TEST(Json, ReplacesBytesThatAreNotUtf8InsteadOfThrowing) {
  EXPECT_EQ(json_text(Json("a\xff"), JsonMode::Short), "\"a\xef\xbf\xbd\"");
}

TEST(AbsoluteMountPoint, ResolvesExistingPathsAndNormalizesOthers) {
  EXPECT_EQ(absolute_mount_point("/"), "/");
  EXPECT_EQ(absolute_mount_point("/no/such/../dir/"), "/no/dir");
  char* cwd = getcwd(nullptr, 0);
  char* resolved = realpath(cwd, nullptr);
  EXPECT_EQ(absolute_mount_point("."), resolved);
  std::free(resolved);
  std::free(cwd);
}

TEST(AbsoluteMountPoint, SendsNamesThatAreNotUtf8OrExistHereAsTrimdShowsThem) {
  char dir_template[] = "/tmp/trimctl-names-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string latin1 = dir + "/\xe9t\xe9";
  const std::string lookalike = dir + "/\\xe9t\\xe9";  // a backslash, "x", "e", "9"
  ASSERT_EQ(mkdir(latin1.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(lookalike.c_str(), 0700), 0);
  EXPECT_EQ(absolute_mount_point(latin1), dir + "/\\xe9t\\xe9");
  EXPECT_EQ(absolute_mount_point(lookalike), dir + "/\\x5cxe9t\\x5cxe9");
  // Not here (trimd may see mounts this client cannot): as typed when UTF-8.
  EXPECT_EQ(absolute_mount_point("/no/such/caf\\xe9"), "/no/such/caf\\xe9");
  EXPECT_EQ(absolute_mount_point("/no/such/caf\xe9"), "/no/such/caf\\xe9");
  rmdir(latin1.c_str());
  rmdir(lookalike.c_str());
  rmdir(dir.c_str());
}

TEST(ParseOptions, AcceptsOptionsBeforeAndAfterTheCommand) {
  char* argv[] = {const_cast<char*>("trimctl"), const_cast<char*>("--json"),
                  const_cast<char*>("trim"),    const_cast<char*>("/mnt"),
                  const_cast<char*>("--wait"),  nullptr};
  const Options options = parse_options(5, argv);
  EXPECT_EQ(options.command, "trim");
  EXPECT_EQ(options.arguments, std::vector<std::string>{"/mnt"});
  EXPECT_EQ(options.json, JsonMode::Short);
  EXPECT_TRUE(options.wait);
  EXPECT_FALSE(options.ignore_idle);
}

TEST(ParseOptions, RejectsUnknownOptionsAndAMissingAddress) {
  char* unknown[] = {const_cast<char*>("trimctl"), const_cast<char*>("--frob"), nullptr};
  EXPECT_THROW(parse_options(2, unknown), UsageError);
  char* missing[] = {const_cast<char*>("trimctl"), const_cast<char*>("--address"), nullptr};
  EXPECT_THROW(parse_options(2, missing), UsageError);
}

}  // namespace
