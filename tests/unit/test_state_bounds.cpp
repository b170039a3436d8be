// The state file never grows past what trimd reads back (issue 16 item 4):
// the largest state the bounds allow is written and read back whole, and
// what does not fit is the least recently seen, left out on purpose.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "file_test_kit.hpp"
#include "state_store.hpp"

namespace fs = std::filesystem;
using namespace trimd;
using trimd::test::expect_same_record;

namespace {

constexpr std::uint64_t kLargestCount = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kPathMax = 4096;  // with its NUL: the longest path open(2) takes
constexpr std::int64_t kSeenBase = 1800000000000000;
// Just under the longest duration a state file holds (100 years).
constexpr std::int64_t kLongUsec = 3'000'000'000'000'000;

// `length` bytes, starting "/srv/<n>/"; `escaped` mixes in bytes that TOML
// writes as two (", \t) or six (\u0001) bytes.
std::string long_mount_point(std::size_t n, std::size_t length, bool escaped) {
  std::string path = fmt::format("/srv/{}/", n);
  const std::string filler = escaped ? "a\"b\tc\x01/" : "abcdefg/";
  while (path.size() < length) path += filler[path.size() % filler.size()];
  path.resize(length);
  return path;
}

PassHistoryEntry history_entry(std::size_t n, std::size_t i) {
  return PassHistoryEntry{
      from_usec(kLatestStoredUsec - 1000 + static_cast<std::int64_t>(i)),
      from_usec(kLatestStoredUsec - static_cast<std::int64_t>(n)),
      Duration{kLongUsec + 1},
      Duration{kLongUsec + 2},
      kLargestCount - i,
      PassOutcome{PassResult::Failed, "Structure needs cleaning (after 9999 chunks of 4 GiB)"},
      kLargestCount - n};
}

// Every field set, every number as long as it gets: the most a record takes.
FsRecord full_record(std::size_t n, const std::string& mount_point) {
  FsRecord r;
  r.mount_point = mount_point;
  r.last_start = from_usec(kLatestStoredUsec - 1);
  r.last_end = from_usec(kLatestStoredUsec);
  r.last_result = PassOutcome{PassResult::Failed, "Structure needs cleaning"};
  r.last_bytes = kLargestCount;
  r.cursor = kLargestCount - n;  // a different one each: all must come back
  r.pass_start = from_usec(kLatestStoredUsec);
  r.pass_bytes = kLargestCount;
  r.pass_waited = Duration{kLongUsec + 3};
  r.last_trimming = Duration{kLongUsec + 4};
  r.last_waited = Duration{kLongUsec + 5};
  r.lifetime = Lifetime{kLargestCount, kLargestCount, kLargestCount, kLargestCount, kLargestCount};
  for (std::size_t i = 0; i < kHistoryLength; ++i) add_history(r, history_entry(n, i));
  r.first_seen = from_usec(kLatestStoredUsec);
  r.last_seen = from_usec(kSeenBase + static_cast<std::int64_t>(n));  // n: the order of sightings
  r.taken_over = TakeoverRecord{from_usec(kLatestStoredUsec), TakeoverOrigin::Request};
  return r;
}

class StateBoundsTest : public testing::Test {
 protected:
  void SetUp() override {
    logger_ = std::make_shared<spdlog::logger>(
        "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_));
    logger_->set_pattern("%l");
    previous_logger_ = spdlog::default_logger();
    spdlog::set_default_logger(logger_);
  }
  void TearDown() override { spdlog::set_default_logger(previous_logger_); }

  std::uintmax_t file_size() const { return fs::file_size(root_ / "state.toml"); }

  trimd::test::ScratchDir scratch_{"trimd-bounds"};
  const fs::path& root_ = scratch_.path();
  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<spdlog::logger> previous_logger_;
};

}  // namespace

// The case: trimd wrote this, refused to read it back at the next
// start and lost every cursor and lifetime figure.
TEST_F(StateBoundsTest,
       TwoThousandFiftyFilesystemsWithPathMaxMountPointsAndFullHistoriesAreReadBackWhole) {
  StateMap state;
  for (std::size_t n = 0; n < 2050; ++n)
    state[fmt::format("uuid-{:08x}-1234-5678-9abc-def012345678", n)] =
        full_record(n, long_mount_point(n, kPathMax - 1, false));
  StateStore store{root_};
  const auto started = std::chrono::steady_clock::now();
  store.save(state);
  const auto saved = std::chrono::steady_clock::now();
  const StateMap loaded = store.load();
  const auto ms = [](auto d) {
    return std::to_string(std::chrono::duration<double, std::milli>(d).count());
  };
  RecordProperty("save_ms", ms(saved - started));
  RecordProperty("load_ms", ms(std::chrono::steady_clock::now() - saved));
  RecordProperty("state_file_bytes", std::to_string(file_size()));
  EXPECT_EQ(std::distance(fs::directory_iterator(root_), fs::directory_iterator()), 1)
      << "only state.toml: nothing moved aside, no temporary file";
  ASSERT_EQ(loaded.size(), state.size());
  for (const auto& [id, record] : state) {
    SCOPED_TRACE(id);
    ASSERT_EQ(loaded.count(id), 1u);
    expect_same_record(loaded.at(id), record);
  }
}

// As many records as the bound allows, each as large as a record gets:
// mount points of PATH_MAX bytes full of characters TOML escapes (up to six
// bytes for one), held twice (in the id too, as when a filesystem has no
// UUID), full histories.
// What is written fits the reader, and is read back record for record.
TEST_F(StateBoundsTest, TheLargestStateTheBoundsAllowIsWrittenWithinTheReadersCapAndReadBack) {
  StateMap state;
  for (std::size_t n = 0; n < kMaxStateRecords; ++n) {
    const std::string mount_point = long_mount_point(n, kPathMax - 1, true);
    state["dev-/dev/loop" + std::to_string(n) + "-" + mount_point] = full_record(n, mount_point);
  }
  StateStore store{root_};
  const std::size_t left_out = store.save(state);
  const std::uintmax_t size = file_size();
  RecordProperty("state_file_bytes", std::to_string(size));
  RecordProperty("records_kept", std::to_string(kMaxStateRecords - left_out));
  EXPECT_LE(size, kMaxStateFileBytes);
  EXPECT_GT(left_out, 0u) << "this state is larger than the file may be";
  const StateMap loaded = store.load();
  ASSERT_EQ(loaded.size(), state.size() - left_out) << "read back, not moved aside";
  for (const auto& [id, record] : state) {
    const std::size_t n = static_cast<std::size_t>(to_usec(*record.last_seen) - kSeenBase);
    ASSERT_EQ(loaded.count(id), n >= left_out ? 1u : 0u) << "the least recently seen go first";
    if (n >= left_out) expect_same_record(loaded.at(id), record);
  }
}

TEST_F(StateBoundsTest, OverTheRecordBoundTheLeastRecentlySeenAreLeftOut) {
  StateMap state;
  state["seen-first"].last_seen = from_usec(kSeenBase);
  state["seen-last"].last_seen = from_usec(kSeenBase + 3);
  state["never-seen"].mount_point = "/nowhere";
  state["older-file"].last_end = from_usec(kSeenBase + 2);  // no last_seen: its last pass counts
  StateStore store{root_, StateBounds{kMaxStateFileBytes, 2}};
  EXPECT_EQ(store.save(state), 2u);
  const StateMap loaded = store.load();
  EXPECT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded.count("seen-last"), 1u);
  EXPECT_EQ(loaded.count("older-file"), 1u);
}

TEST_F(StateBoundsTest, OverTheByteBoundTheLeastRecentlySeenAreLeftOut) {
  StateMap state;
  for (std::size_t n = 0; n < 3; ++n)
    state["fs-" + std::to_string(n)] = full_record(n, long_mount_point(n, 100, false));
  StateStore whole{root_};
  ASSERT_EQ(whole.save(state), 0u);
  const std::uintmax_t all = file_size();
  StateStore bounded{root_, StateBounds{static_cast<std::size_t>(all) - 1, kMaxStateRecords}};
  EXPECT_EQ(bounded.save(state), 1u);
  EXPECT_LE(file_size(), all - 1);
  const StateMap loaded = bounded.load();
  EXPECT_EQ(loaded.count("fs-0"), 0u);
  EXPECT_EQ(loaded.count("fs-1"), 1u);
  EXPECT_EQ(loaded.count("fs-2"), 1u);
}

TEST_F(StateBoundsTest, RecordsLeftOutAreWarnedAboutOnceNotAtEverySave) {
  StateMap state;
  for (std::int64_t n = 0; n < 3; ++n)
    state["fs-" + std::to_string(n)].last_seen = from_usec(kSeenBase + n);
  StateStore store{root_, StateBounds{kMaxStateFileBytes, 2}};
  store.save(state);
  store.save(state);
  EXPECT_EQ(log_.str(), "warning\n");
  state.erase("fs-2");
  state.erase("fs-1");
  store.save(state);
  store.save(state);
  EXPECT_EQ(log_.str(), "warning\n") << "nothing left out, nothing to say";
}

// Issue 16 item 11: lifetime figures at the largest the file holds wrapped.
TEST(LifetimeFigures, StopAtTheLargestTheStateFileHoldsInsteadOfWrapping) {
  EXPECT_EQ(add_saturating(kMaxLifetimeCount, 1), kMaxLifetimeCount);
  EXPECT_EQ(add_saturating(kMaxLifetimeCount - 1, 1), kMaxLifetimeCount);
  EXPECT_EQ(add_saturating(std::numeric_limits<std::uint64_t>::max(), 1), kMaxLifetimeCount);
  EXPECT_EQ(add_saturating(3, 4), 7u);
  const Lifetime largest{kLargestCount, kLargestCount, kLargestCount, kLargestCount, kLargestCount};
  Lifetime total;
  for (int i = 0; i < 3; ++i) total += largest;
  EXPECT_EQ(total, largest);
}
