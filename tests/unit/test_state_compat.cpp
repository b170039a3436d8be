// The state file across versions: a file written by 1caa747 (the last
// release's StateStore, tests/data/state-1caa747.toml) still loads, and its
// pass results come back as the types the engine uses, text only in the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "file_test_kit.hpp"
#include "state_store.hpp"

namespace {

using trimd::PassOutcome;
using trimd::PassResult;
using trimd::test::read_text;

const std::string kOldFile = std::string(TRIMD_TEST_DATA) + "/state-1caa747.toml";

trimd::StateMap load_old_file() { return trimd::parse_state(read_text(kOldFile), kOldFile); }

TEST(StateCompat, AFileOf1caa747LoadsEveryRecord) {
  const auto state = load_old_file();
  EXPECT_EQ(state.size(), 7u);
  const auto& a = state.at("uuid-0-dev-/dev/loop0");
  EXPECT_EQ(a.mount_point, "/srv/a");
  EXPECT_EQ(a.last_bytes, 1000u);
  EXPECT_EQ(a.lifetime.bytes, 5000u);
  EXPECT_EQ(a.history.size(), 5u);
  EXPECT_EQ(state.at("uuid-unfinished").cursor, 1ull << 30);
}

TEST(StateCompat, EveryResultText1caa747WroteReadsAsItsType) {
  const auto state = load_old_file();
  const PassOutcome expected[] = {{PassResult::Success, {}},
                                  {PassResult::Failed, "Input/output error"},
                                  {PassResult::Cancelled, {}},
                                  {PassResult::Unsupported, {}},
                                  {PassResult::Interrupted, "/srv/d was unmounted"}};
  for (int i = 0; i < 5; ++i) {
    const auto& record =
        state.at("uuid-" + std::to_string(i) + "-dev-/dev/loop" + std::to_string(i));
    EXPECT_EQ(record.last_result, expected[i]) << "record " << i;
    ASSERT_EQ(record.history.size(), 5u);
    for (int h = 0; h < 5; ++h) EXPECT_EQ(record.history[h].result, expected[h]) << i << "/" << h;
  }
}

TEST(StateCompat, AnEmptyResultOf1caa747MeansNeverTrimmed) {
  const auto state = load_old_file();
  EXPECT_EQ(state.at("uuid-never").last_result, std::nullopt);
  EXPECT_EQ(state.at("uuid-unfinished").last_result, std::nullopt);
}

TEST(StateCompat, ResultsAreWrittenAgainInTheTextOf1caa747) {
  const auto state = load_old_file();
  const trimd::test::ScratchDir dir{"trimd-compat"};
  trimd::StateStore store{dir.path()};
  store.save(state);
  const std::string written = read_text(store.path());
  for (const char* text : {"\"success\"", "\"failed: Input/output error\"", "\"cancelled\"",
                           "\"unsupported\"", "\"interrupted: /srv/d was unmounted\""}) {
    EXPECT_THAT(written, testing::HasSubstr("last_result = " + std::string(text)));
    EXPECT_THAT(written, testing::HasSubstr("result = " + std::string(text) + ","));
  }
  trimd::test::expect_same_state(state, store.load());
}

TEST(StateCompat, AResultTextTrimdNeverWroteMakesTheFileCorrupt) {
  EXPECT_THROW(trimd::parse_state("[fs]\nlast_result = \"exploded\"\n", "state.toml"),
               std::runtime_error);
  EXPECT_THROW(trimd::parse_state("[fs]\nhistory = [{ result = \"\" }]\n", "state.toml"),
               std::runtime_error);
}

}  // namespace
