#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "fifo_guard.hpp"

using namespace std::chrono_literals;
using testing::HasSubstr;
using trimd::Config;
using trimd::ConfigError;
using trimd::Duration;
using trimd::TrimPolicy;

namespace {

const std::string data_dir = TRIMD_TEST_DATA;

constexpr std::uint64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024, TiB = GiB * 1024;

ConfigError error_of(const std::string& text) {
  try {
    trimd::parse_config(text, "test.toml");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return ConfigError("test.toml", -1, -1, "no error");
}

// A config text that must fail with `message` at line:column of test.toml.
struct ErrorCase {
  std::string text;
  int line, column;
  std::string message;
};

void expect_errors(const std::vector<ErrorCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const ConfigError e = error_of(c.text);
    EXPECT_EQ(e.file(), "test.toml");
    EXPECT_EQ(e.line(), c.line);
    EXPECT_EQ(e.column(), c.column);
    EXPECT_THAT(e.message(), HasSubstr(c.message));
    EXPECT_THAT(e.what(), testing::StartsWith("test.toml:" + std::to_string(c.line) + ":"));
  }
}

void expect_same_window(const std::optional<trimd::TimeWindow>& a,
                        const std::optional<trimd::TimeWindow>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(a->start_minute, b->start_minute);
  EXPECT_EQ(a->end_minute, b->end_minute);
}

void expect_same_policy(const TrimPolicy& a, const TrimPolicy& b) {
  EXPECT_EQ(a.enabled, b.enabled);
  EXPECT_EQ(a.schedule.interval, b.schedule.interval);
  EXPECT_EQ(a.schedule.randomized_delay, b.schedule.randomized_delay);
  EXPECT_EQ(a.schedule.first_delay, b.schedule.first_delay);
  EXPECT_EQ(a.schedule.overdue_grace, b.schedule.overdue_grace);
  expect_same_window(a.schedule.window, b.schedule.window);
  EXPECT_EQ(a.chunk_bytes, b.chunk_bytes);
  EXPECT_EQ(a.min_extent_bytes, b.min_extent_bytes);
  EXPECT_EQ(a.chunk_pause, b.chunk_pause);
  EXPECT_EQ(a.chunk_time, b.chunk_time);
  EXPECT_EQ(a.rate_limit_bytes_per_sec, b.rate_limit_bytes_per_sec);
  EXPECT_EQ(a.duty, b.duty);
  EXPECT_EQ(a.gentle_chunk_bytes, b.gentle_chunk_bytes);
  EXPECT_EQ(a.gentle_pause, b.gentle_pause);
  EXPECT_EQ(a.skip_rotational, b.skip_rotational);
  EXPECT_EQ(a.inline_discard, b.inline_discard);
  EXPECT_EQ(a.on_battery, b.on_battery);
  EXPECT_EQ(a.hand_back_on_stop, b.hand_back_on_stop);
  EXPECT_EQ(a.scope, b.scope);
  EXPECT_EQ(a.forget_after, b.forget_after);
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_TRUE(a == b) << "a field not compared above differs";
}

}  // namespace

TEST(ParseSize, ReadsPlainNumbersAsBytes) {
  EXPECT_EQ(trimd::parse_size("0"), 0u);
  EXPECT_EQ(trimd::parse_size("4096"), 4096u);
  EXPECT_EQ(trimd::parse_size(" 512 "), 512u);
  EXPECT_EQ(trimd::parse_size("512B"), 512u);
}

TEST(ParseSize, ReadsBinaryUnitsAsPowersOf1024AndDecimalOnesAsPowersOf1000) {
  const std::vector<std::pair<std::string, std::uint64_t>> cases{
      {"1K", KiB},
      {"1KiB", KiB},
      {"2M", 2 * MiB},
      {"3MiB", 3 * MiB},
      {"1G", GiB},
      {"1GiB", GiB},
      {"1T", TiB},
      {"2TiB", 2 * TiB},
      {"1kib", KiB},
      {"1KB", 1000},
      {"1MB", 1000000},
      {"1GB", 1000000000},
      {"1TB", 1000000000000},
      {"256 MiB", 256 * MiB},
      {"1.5GiB", GiB + GiB / 2},
      {"0.5K", 512},
      {".25MiB", MiB / 4},
      {"1.5KB", 1500},
  };
  for (const auto& [text, bytes] : cases) EXPECT_EQ(trimd::parse_size(text), bytes) << text;
}

TEST(ParseSize, RejectsTextThatIsNotASizeWithAnActionableMessage) {
  for (const char* text :
       {"", " ", "12 parsecs", "-1", "GiB", "1 GiB more", "1..5K", "1e6", "1ZiB", "0x10"})
    EXPECT_THROW(trimd::parse_size(text), std::invalid_argument) << text;
  try {
    trimd::parse_size("12 parsecs");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 R"("12 parsecs" is not a size (use e.g. "256MiB", "1GiB", or a number of bytes))");
  }
}

TEST(ParseSize, RejectsFractionsOfAByte) {
  EXPECT_THAT([] { trimd::parse_size("1.5"); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("whole number of bytes")));
}

TEST(ParseSize, RejectsSizesBeyond64Bits) {
  EXPECT_EQ(trimd::parse_size("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(trimd::parse_size("16777215TiB"), 16777215 * TiB);
  for (const char* text : {"18446744073709551616", "16777216TiB", "99999999999999999999999GiB"})
    EXPECT_THAT([&] { trimd::parse_size(text); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("too large")))
        << text;
}

TEST(ParseDuration, ReadsEveryUnitAndChainsOfThem) {
  const std::vector<std::pair<std::string, Duration>> cases{
      {"7us", 7us},        {"100ms", 100ms}, {"30s", 30s},    {"30sec", 30s},   {"2min", 2min},
      {"2m", 2min},        {"3h", 3h},       {"2d", 48h},     {"1w", 168h},     {"1h30min", 90min},
      {"1h 30min", 90min}, {"1w 2d", 216h},  {"1.5h", 90min}, {"2 min", 2min},  {"1s500ms", 1500ms},
      {"0", 0s},           {"30", 30s},      {"1.5", 1500ms}, {" 5min ", 5min},
  };
  for (const auto& [text, duration] : cases)
    EXPECT_EQ(trimd::parse_duration(text), duration) << text;
}

TEST(ParseDuration, RejectsTextThatIsNotADuration) {
  for (const char* text :
       {"", "5 parsecs", "-5s", "1h30", "s", "5S", "1h,30min", "3 fortnights", "1.2.3s"})
    EXPECT_THAT([&] { trimd::parse_duration(text); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("is not a duration")))
        << text;
}

TEST(ParseDuration, RejectsDurationsBeyond64BitsOfMicroseconds) {
  EXPECT_EQ(trimd::parse_duration("1000000w"), std::chrono::hours{168} * 1000000);
  for (const char* text :
       {"20000000w", "15250000w 15250000w", "30000000w 30000000w", "99999999999999999999s"})
    EXPECT_THAT([&] { trimd::parse_duration(text); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("too long")))
        << text;
}

TEST(ParseTimeWindow, ReadsStartAndEndAsMinutesAfterMidnight) {
  const std::vector<std::tuple<std::string, int, int>> cases{
      {"01:00-06:00", 60, 360}, {"22:00-06:00", 1320, 360},   {"1:30-2:45", 90, 165},
      {"22:00-24:00", 1320, 0}, {" 01:00 - 06:00 ", 60, 360}, {"00:00-23:59", 0, 1439},
  };
  for (const auto& [text, start, end] : cases) {
    const auto window = trimd::parse_time_window(text);
    EXPECT_EQ(window.start_minute, start) << text;
    EXPECT_EQ(window.end_minute, end) << text;
  }
}

TEST(ParseTimeWindow, RejectsAnythingButHoursAndMinutes) {
  for (const char* text : {"", "25:00-06:00", "01:60-02:00", "01:00", "0100-0600",
                           "01:00-06:00-07:00", "1:5-2:00", "aa:bb-cc:dd", "24:01-01:00"})
    EXPECT_THAT([&] { trimd::parse_time_window(text); },
                testing::ThrowsMessage<std::invalid_argument>(HasSubstr("HH:MM-HH:MM")))
        << text;
}

TEST(FormatSize, PrintsBytesBelowOneKibibyteAndOneDecimalAbove) {
  const std::vector<std::pair<std::uint64_t, std::string>> cases{
      {0, "0 B"},
      {512, "512 B"},
      {1023, "1023 B"},
      {KiB, "1 KiB"},
      {1536, "1.5 KiB"},
      {GiB + GiB / 2, "1.5 GiB"},
      {GiB - 1, "1 GiB"},
      {100 * MiB, "100 MiB"},
      {std::numeric_limits<std::uint64_t>::max(), "16 EiB"},
  };
  for (const auto& [bytes, text] : cases) EXPECT_EQ(trimd::format_size(bytes), text) << bytes;
}

TEST(FormatDuration, PrintsTheTwoLargestUnitsRounded) {
  const std::vector<std::pair<Duration, std::string>> cases{
      {0s, "0s"},           {7us, "7us"},        {250ms, "250ms"},
      {1500ms, "1s 500ms"}, {90min, "1h 30min"}, {90min + 20s, "1h 30min"},
      {168h, "1w"},         {192h, "1w 1d"},     {59min + 59700ms, "1h"},
      {-5s, "-5s"},         {2min, "2min"},
  };
  for (const auto& [duration, text] : cases)
    EXPECT_EQ(trimd::format_duration(duration), text) << text;
}

TEST(FormatDuration, PrintsWhatParseDurationReadsBack) {
  for (const Duration d :
       {Duration{250ms}, Duration{90min}, Duration{192h}, Duration{1500ms}, Duration{7us}})
    EXPECT_EQ(trimd::parse_duration(trimd::format_duration(d)), d);
}

TEST(ConfigFile, ShippedTrimdTomlParsesToExactlyTheCompiledInDefaults) {
  const Config shipped = trimd::load_config(data_dir + "/../../config/trimd.toml", false);
  const Config defaults;
  EXPECT_EQ(shipped.sample_interval, defaults.sample_interval);
  EXPECT_EQ(shipped.idle.max_iops, defaults.idle.max_iops);
  EXPECT_EQ(shipped.idle.max_bytes_per_sec, defaults.idle.max_bytes_per_sec);
  EXPECT_EQ(shipped.idle.max_busy_fraction, defaults.idle.max_busy_fraction);
  EXPECT_EQ(shipped.idle.idle_window, defaults.idle.idle_window);
  EXPECT_TRUE(shipped.idle == defaults.idle);
  EXPECT_EQ(shipped.preempt_interval, defaults.preempt_interval);
  EXPECT_EQ(shipped.preempt_latency, defaults.preempt_latency);
  expect_same_policy(shipped.trim, defaults.trim);
  EXPECT_TRUE(shipped.overrides.empty());
  EXPECT_EQ(shipped.log_level, defaults.log_level);
  EXPECT_EQ(shipped.metrics_textfile, defaults.metrics_textfile);
  EXPECT_FALSE(shipped.fleet) << "[fleet] is shipped commented out";
}

TEST(ConfigFile, ReadsEveryKeyOfEverySection) {
  const Config c = trimd::load_config(data_dir + "/config-full.toml", false);
  EXPECT_EQ(c.sample_interval, 500ms);
  EXPECT_EQ(c.idle.idle_window, 2min);
  EXPECT_EQ(c.idle.max_iops, 50.5);
  EXPECT_EQ(c.idle.max_bytes_per_sec, 4.0 * MiB);
  EXPECT_EQ(c.idle.max_busy_fraction, 0.1);
  TrimPolicy expected;
  expected.enabled = false;
  expected.schedule = {72h, 30min, 10min, 12h, trimd::TimeWindow{1320, 360}};
  expected.chunk_bytes = 256 * MiB;
  expected.min_extent_bytes = MiB;
  expected.chunk_pause = 250ms;
  expected.chunk_time = 2s;
  expected.rate_limit_bytes_per_sec = 100000000;
  expected.duty = 0.02;
  expected.gentle_chunk_bytes = 16 * MiB;
  expected.gentle_pause = 10s;
  expected.skip_rotational = true;
  expected.inline_discard = trimd::InlineDiscardPolicy::Takeover;
  expected.on_battery = trimd::OnBatteryPolicy::Gentle;
  expected.hand_back_on_stop = false;
  expect_same_policy(c.trim, expected);
  EXPECT_EQ(c.log_level, "debug");

  ASSERT_EQ(c.overrides.size(), 2u);
  const auto& srv = c.overrides[0];
  EXPECT_EQ(srv.mount_point_glob, "/srv/*");
  EXPECT_EQ(srv.uuid, "0B6B1B4E-3C8A-4A4E-9A53-1F2F1C8A2B3D");
  EXPECT_EQ(srv.fs_type, "xfs");
  TrimPolicy srv_expected = expected;
  srv_expected.enabled = true;
  srv_expected.schedule.interval = 24h;
  srv_expected.schedule.randomized_delay = 0s;
  srv_expected.schedule.window.reset();
  srv_expected.chunk_bytes = 64 * MiB;
  srv_expected.min_extent_bytes = 64 * KiB;
  srv_expected.chunk_pause = 1s;
  srv_expected.chunk_time = 0s;
  srv_expected.rate_limit_bytes_per_sec = GiB;
  srv_expected.duty = 0.005;
  srv_expected.schedule.overdue_grace = 48h;
  srv_expected.skip_rotational = false;
  srv_expected.inline_discard = trimd::InlineDiscardPolicy::Ignore;
  srv_expected.on_battery = trimd::OnBatteryPolicy::Trim;
  expect_same_policy(c.policy_for("/srv/web", "0b6b1b4e-3c8a-4a4e-9a53-1f2f1c8a2b3d", "xfs"),
                     srv_expected);
  EXPECT_FALSE(c.overrides[1].mount_point_glob || c.overrides[1].uuid);
  EXPECT_EQ(c.overrides[1].changes.size(), 1u);
  EXPECT_EQ(c.policy_for("/home", "", "btrfs").chunk_bytes, 4 * GiB);
}

TEST(ConfigFile, PreemptLatencyIsAutoOrADurationUpToOneSecond) {
  EXPECT_FALSE(trimd::parse_config("", "t.toml").preempt_latency) << "auto by default";
  EXPECT_FALSE(
      trimd::parse_config("[idle]\npreempt_latency = \"auto\"\n", "t.toml").preempt_latency);
  EXPECT_EQ(trimd::parse_config("[idle]\npreempt_latency = \"2ms\"\n", "t.toml").preempt_latency,
            Duration{2ms});
  EXPECT_EQ(trimd::parse_config("[idle]\npreempt_latency = \"0\"\n", "t.toml").preempt_latency,
            Duration{0});
  expect_errors({{"[idle]\npreempt_latency = \"2s\"\n", 2, 19, "more than 1s"},
                 {"[idle]\npreempt_latency = \"often\"\n", 2, 19,
                  "idle.preempt_latency: \"often\" is neither \"auto\" nor a duration"}});
}

TEST(ConfigFile, EmptyTextYieldsTheDefaults) {
  const Config c = trimd::parse_config("", "empty.toml");
  expect_same_policy(c.trim, TrimPolicy{});
  EXPECT_EQ(c.sample_interval, Config{}.sample_interval);
  EXPECT_TRUE(c.overrides.empty());
}

TEST(ConfigFile, MissingFileYieldsDefaultsOnlyWhenAllowed) {
  const std::string missing = data_dir + "/config-does-not-exist.toml";
  EXPECT_EQ(trimd::load_config(missing, true).log_level, "info");
  try {
    trimd::load_config(missing, false);
    FAIL() << "a missing file was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), missing);
    EXPECT_EQ(e.line(), 0);
    EXPECT_STREQ(e.what(), (missing + ": cannot read: No such file or directory").c_str());
  }
}

TEST(ConfigFile, UnreadableFileIsAnErrorEvenWhenMissingIsAllowed) {
  EXPECT_THAT([] { trimd::load_config(data_dir, true); },
              testing::ThrowsMessage<ConfigError>(HasSubstr("cannot read: Is a directory")));
}

// F8: --check-config and SIGHUP read the config through load_config.
TEST(ConfigFile, AFifoIsRefusedAtOnceNotWaitedOn) {
  std::string dir = (std::filesystem::temp_directory_path() / "trimd-config-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string fifo = dir + "/trimd.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto load = [&] { trimd::load_config(fifo, true); };
  EXPECT_THAT([&] { trimd::test::without_blocking_on(fifo, load); },
              testing::ThrowsMessage<ConfigError>(
                  HasSubstr("trimd.toml: cannot read: is a FIFO, not a regular file")));
  std::filesystem::remove_all(dir);
}

TEST(ConfigFile, AnEndlessDeviceIsRefusedWithoutReadingIt) {
  EXPECT_THAT([] { trimd::load_config("/dev/zero", false); },
              testing::ThrowsMessage<ConfigError>(
                  HasSubstr("/dev/zero: cannot read: is a character device, not a regular file")));
}

TEST(ConfigErrors, NameFileLineAndColumnOfTheBadValue) {
  const std::string file = data_dir + "/config-bad-size.toml";
  try {
    trimd::load_config(file, false);
    FAIL() << "a bad size was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.line(), 12);
    EXPECT_EQ(e.column(), 14);
    EXPECT_EQ(
        e.message(),
        R"(trim.chunk_size: "12 parsecs" is not a size (use e.g. "256MiB", "1GiB", or a number of bytes))");
    EXPECT_EQ(std::string{e.what()}, file + ":12:14: " + e.message());
  }
}

TEST(ConfigErrors, PointAtTheOffendingKeyOrValue) {
  expect_errors({
      {"[trim]\nenabled = = true\n", 2, 11, "could not determine value type"},
      {"[trimm]\n", 1, 2, "trimm: unknown key"},
      {"[trim]\nchunk = 5\n", 2, 1, "trim.chunk: unknown key"},
      {"[idle]\nwindows = \"1s\"\n", 2, 1, "idle.windows: unknown key"},
      {"[log]\nfile = \"x\"\n", 2, 1, "log.file: unknown key"},
      {"[[filesystem]]\nmatch = \"/srv\"\nspeed = 3\n", 3, 1, "filesystem.speed: unknown key"},
      {"[[filesystem]]\nmatch = \"/\"\ngentle_pause = \"1s\"\n", 3, 1, "can only be set in [trim]"},
      {"[[filesystem]]\nmatch = \"/\"\nfirst_delay = 1\n", 3, 1, "can only be set in [trim]"},
      {"x = 1\n[[filesystem]]\nenabled = false\n", 2, 1,
       "needs at least one of match, uuid or fs_type"},
      {"[[filesystem]]\nmatch = \"\"\n", 2, 9, "filesystem.match: must not be empty"},
      {"[filesystem]\nmatch = \"/x\"\n", 1, 1, "write it as [[filesystem]]"},
      {"trim = 5\n", 1, 8, "trim: expected a table"},
      {"[trim]\nenabled = \"yes\"\n", 2, 11, "trim.enabled: expected true or false, got a string"},
      {"[trim]\nchunk_size = 1.5\n", 2, 14, "trim.chunk_size: expected a size"},
      {"[trim]\ninterval = \"3 fortnights\"\n", 2, 12,
       "trim.interval: \"3 fortnights\" is not a duration"},
      {"[trim]\nwindow = \"25:00-06:00\"\n", 2, 10,
       "trim.window: \"25:00-06:00\" is not a time window"},
      {"[trim]\nwindow = 1\n", 2, 10, "trim.window: expected a string, got an integer"},
      {"[trim]\nrate_limit = -1\n", 2, 14, "trim.rate_limit: -1 is negative"},
      {"[trim]\npause = -1\n", 2, 9, "trim.pause: -1 is negative"},
      {"[trim]\nmin_extent = \"-4096\"\n", 2, 14, "is not a size"},
      {"[idle]\nmax_iops = -3\n", 2, 12, "idle.max_iops: must not be negative"},
      {"[idle]\nmax_busy = 1.5\n", 2, 12, "idle.max_busy: must be a fraction between 0 and 1"},
      {"[idle]\nmax_busy = -0.1\n", 2, 12, "idle.max_busy: must not be negative"},
      {"[idle]\nsample_interval = \"0s\"\n", 2, 19,
       "idle.sample_interval: 0s is less than 100ms, the shortest accepted"},
      {"[idle]\nsample_interval = 0\n", 2, 19, "idle.sample_interval: 0s is less than 100ms"},
      {"[trim]\nchunk_size = 0\n", 2, 14, "trim.chunk_size: must be greater than 0"},
      {"[[filesystem]]\nfs_type = \"xfs\"\nchunk_size = \"0MiB\"\n", 3, 14,
       "filesystem.chunk_size: must be greater than 0"},
      {"[log]\nlevel = \"loud\"\n", 2, 9, "log.level: \"loud\" is not a level"},
      {"[trim]\ninline_discard = \"remount\"\n", 2, 18,
       "trim.inline_discard: \"remount\" is not a choice (use warn, takeover or ignore)"},
      {"[trim]\ninline_discard = true\n", 2, 18, "trim.inline_discard: expected a string"},
      {"[trim]\non_battery = \"charge\"\n", 2, 14,
       "trim.on_battery: \"charge\" is not a choice (use wait, gentle or trim)"},
      {"[[filesystem]]\nmatch = \"/\"\nhand_back_on_stop = false\n", 3, 1,
       "can only be set in [trim]"},
      {"[trim]\nduty = 2\n", 2, 8, "trim.duty: expected a string, got an integer"},
      {"[trim]\nduty = \"2\"\n", 2, 8, "trim.duty: \"2\" is not a share of time"},
      {"[trim]\nduty = \"-1%\"\n", 2, 8, "trim.duty: \"-1%\" is not a share of time"},
      {"[trim]\nduty = \"101%\"\n", 2, 8, "trim.duty: \"101%\" is more than 100%"},
  });
}

// A budget below one part in ten thousand would hold a pass for months.
TEST(ConfigErrors, NameTheBoundsOfADuty) {
  expect_errors({
      {"[trim]\nduty = \"0.009%\"\n", 2, 8,
       "trim.duty: \"0.009%\" is less than 0.01%, the smallest budget accepted"},
      {"[fleet]\netcd = [\"http://a:1\"]\nduty = \"0.001%\"\n", 3, 8,
       "fleet.duty: \"0.001%\" is less than 0.01%"},
  });
  EXPECT_EQ(trimd::parse_config("[trim]\nduty = \"0.01%\"\n", "t.toml").trim.duty, 0.0001);
  EXPECT_EQ(trimd::parse_config("[trim]\nduty = \"100%\"\n", "t.toml").trim.duty, 1.0);
  EXPECT_EQ(trimd::parse_config("[trim]\nduty = \"0\"\n", "t.toml").trim.duty, 0.0);
  EXPECT_EQ(trimd::parse_config("[trim]\nduty = \"0%\"\n", "t.toml").trim.duty, 0.0);
}

TEST(ConfigErrors, NameTheBoundOfADurationOutOfRange) {
  expect_errors({
      {"[trim]\noverdue_grace = \"100000d\"\n", 2, 17,
       "trim.overdue_grace: 14285w 5d is more than 10 years, the longest accepted"},
      {"[trim]\nfirst_delay = \"100000d\"\n", 2, 15,
       "trim.first_delay: 14285w 5d is more than 10 years"},
      {"[trim]\nrandomized_delay = \"3654d\"\n", 2, 20, "is more than 10 years"},
      {"[[filesystem]]\nmatch = \"/\"\ninterval = \"5000d\"\n", 3, 12,
       "filesystem.interval: 714w 2d is more than 10 years"},
      {"[trim]\ninterval = \"1s\"\n", 2, 12,
       "trim.interval: 1s is less than 1min, the shortest accepted"},
      {"[trim]\ninterval = 0\n", 2, 12, "trim.interval: 0s is less than 1min"},
      {"[idle]\nsample_interval = \"1us\"\n", 2, 19,
       "idle.sample_interval: 1us is less than 100ms, the shortest accepted"},
      {"[idle]\nsample_interval = \"2h\"\n", 2, 19, "idle.sample_interval: 2h is more than 1h"},
      {"[idle]\nwindow = \"2d\"\n", 2, 10, "idle.window: 2d is more than 1d"},
      {"[trim]\npause = \"2h\"\n", 2, 9, "trim.pause: 2h is more than 1h"},
      {"[trim]\nchunk_time = \"1d\"\n", 2, 14, "trim.chunk_time: 1d is more than 1h"},
      {"[trim]\ngentle_pause = 7200\n", 2, 16, "trim.gentle_pause: 2h is more than 1h"},
  });
}

TEST(ConfigFile, AcceptsDurationsAtTheEndsOfTheirRanges) {
  const Config c = trimd::parse_config(
      "[idle]\nsample_interval = \"100ms\"\nwindow = \"1d\"\n"
      "[trim]\ninterval = \"1min\"\noverdue_grace = \"3653d\"\nfirst_delay = \"0\"\n"
      "pause = \"1h\"\n",
      "ends.toml");
  EXPECT_EQ(c.sample_interval, 100ms);
  EXPECT_EQ(c.trim.schedule.interval, 1min);
  EXPECT_EQ(c.trim.schedule.overdue_grace, trimd::kMaxPolicyDuration);
}

TEST(PolicyOverride, MatchesOnlyWhenEveryGivenKeyMatches) {
  trimd::PolicyOverride o;
  o.mount_point_glob = "/srv/*";
  o.fs_type = "xfs";
  EXPECT_TRUE(o.matches("/srv/web", "1234", "xfs"));
  EXPECT_TRUE(o.matches("/srv/vm/images", "1234", "xfs"));  // fnmatch without FNM_PATHNAME
  EXPECT_FALSE(o.matches("/srv/web", "1234", "ext4"));
  EXPECT_FALSE(o.matches("/home", "1234", "xfs"));
  o.uuid = "0B6B1B4E-3C8A";
  EXPECT_TRUE(o.matches("/srv/web", "0b6b1b4e-3c8a", "xfs"));
  EXPECT_FALSE(o.matches("/srv/web", "0b6b1b4e-3c8", "xfs"));
  EXPECT_FALSE(o.matches("/srv/web", "", "xfs"));
}

TEST(PolicyOverride, ChangesOnlyWhatItSets) {
  const Config c = trimd::parse_config(
      "[[filesystem]]\nmatch = \"*\"\nchunk_size = \"8MiB\"\nwindow = \"\"\n", "t.toml");
  TrimPolicy policy;
  policy.schedule.window = trimd::TimeWindow{60, 360};
  TrimPolicy expected = policy;
  c.overrides.at(0).apply_to(policy);
  expected.chunk_bytes = 8 * MiB;
  expected.schedule.window.reset();
  expect_same_policy(policy, expected);
}

TEST(Config, PolicyForAppliesMatchingOverridesInOrderSoLaterOnesWin) {
  const Config c = trimd::parse_config(R"(
[trim]
window = "01:00-06:00"
[[filesystem]]
match = "/srv/*"
chunk_size = "256MiB"
window = ""
[[filesystem]]
match = "/srv/db"
chunk_size = "128MiB"
[[filesystem]]
fs_type = "btrfs"
enabled = false
)",
                                       "policy.toml");
  const auto db = c.policy_for("/srv/db", "u1", "xfs");
  EXPECT_EQ(db.chunk_bytes, 128 * MiB);
  EXPECT_FALSE(db.schedule.window.has_value());
  EXPECT_TRUE(db.enabled);
  EXPECT_EQ(c.policy_for("/srv/web", "u2", "xfs").chunk_bytes, 256 * MiB);
  const auto home = c.policy_for("/home", "u3", "btrfs");
  EXPECT_FALSE(home.enabled);
  EXPECT_EQ(home.chunk_bytes, GiB);
  ASSERT_TRUE(home.schedule.window.has_value());
  EXPECT_EQ(home.schedule.window->start_minute, 60);
}

TEST(ConfigMetrics, ReadsTheTextfilePathAndDefaultsToNone) {
  EXPECT_EQ(Config{}.metrics_textfile, "");
  const Config c = trimd::parse_config(
      "[metrics]\ntextfile = \"/var/lib/prometheus/node-exporter/trimd.prom\"\n", "t.toml");
  EXPECT_EQ(c.metrics_textfile, "/var/lib/prometheus/node-exporter/trimd.prom");
}

TEST(ConfigMetrics, RejectsARelativePathOrOneTheCollectorWouldNotRead) {
  EXPECT_THAT(error_of("[metrics]\ntextfile = \"trimd.prom\"\n").message(),
              testing::HasSubstr("absolute path"));
  EXPECT_EQ(error_of("[metrics]\ntextfile = \"/tmp/trimd.txt\"\n").line(), 2);
  EXPECT_THAT(error_of("[metrics]\nfile = \"/x.prom\"\n").message(), testing::HasSubstr("file"));
}

TEST(ConfigScope, DefaultsToMountedAndReadsFstab) {
  EXPECT_EQ(Config{}.trim.scope, trimd::TrimPolicy::Scope::Mounted);
  EXPECT_EQ(trimd::parse_config("[trim]\nscope = \"fstab\"\n", "t.toml").trim.scope,
            trimd::TrimPolicy::Scope::Fstab);
}

TEST(ConfigForgetAfter, DefaultsToNinetyDaysAndRefusesLessThanADay) {
  EXPECT_EQ(Config{}.trim.forget_after, std::chrono::hours{24 * 90});
  EXPECT_EQ(trimd::parse_config("[trim]\nforget_after = \"30d\"\n", "t.toml").trim.forget_after,
            std::chrono::hours{24 * 30});
  EXPECT_THAT(error_of("[trim]\nforget_after = \"1h\"\n").message(), HasSubstr("less than 1d"));
  EXPECT_THAT(error_of("[[filesystem]]\nmatch = \"/srv\"\nforget_after = \"30d\"\n").message(),
              HasSubstr("only be set in [trim]"));
}

TEST(ConfigScope, RejectsAnUnknownScopeAndScopeInAFilesystemRule) {
  EXPECT_THAT(error_of("[trim]\nscope = \"all\"\n").message(), HasSubstr("not a scope"));
  EXPECT_THAT(error_of("[[filesystem]]\nmatch = \"/srv\"\nscope = \"fstab\"\n").message(),
              HasSubstr("only be set in [trim]"));
}
