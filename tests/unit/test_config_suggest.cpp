// A misspelt policy key gets the key it most likely meant
// (lib/policy/config_suggest.hpp), and only a near one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>

#include "config.hpp"
#include "config_suggest.hpp"

namespace {

using testing::HasSubstr;
using testing::Not;
using trimd::ConfigError;
using trimd::edit_distance;
using trimd::nearest_name;

constexpr std::array<std::string_view, 6> kIdleKeys{
    "window", "max_iops", "max_busy", "preempt_latency", "preempt_interval", "sample_interval"};

std::string error_of(const std::string& text) {
  try {
    trimd::parse_config(text, "t.toml");
  } catch (const ConfigError& e) {
    return e.message();
  }
  return "accepted";
}

TEST(EditDistance, CountsInsertionsDeletionsReplacementsAndSwapsOfNeighbours) {
  EXPECT_EQ(edit_distance("window", "window"), 0u);
  EXPECT_EQ(edit_distance("windows", "window"), 1u);
  EXPECT_EQ(edit_distance("widow", "window"), 1u);
  EXPECT_EQ(edit_distance("wimdow", "window"), 1u);
  EXPECT_EQ(edit_distance("wnidow", "window"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("max_iops", "max_busy"), 4u);
}

TEST(NearestName, IsTheKnownNameAFewEditsAway) {
  EXPECT_EQ(nearest_name("windows", kIdleKeys), "window");
  EXPECT_EQ(nearest_name("max_iop", kIdleKeys), "max_iops");
  EXPECT_EQ(nearest_name("preempt_latancy", kIdleKeys), "preempt_latency");
}

TEST(NearestName, DropsTheTablesNameSaidTwice) {
  EXPECT_EQ(nearest_name("idle_window", kIdleKeys, "idle"), "window");
  EXPECT_EQ(nearest_name("idle-max_busy", kIdleKeys, "idle"), "max_busy");
  EXPECT_EQ(nearest_name("idle_window", kIdleKeys, "trim"), std::nullopt);
}

TEST(NearestName, SuggestsNothingFarOrAmbiguous) {
  EXPECT_EQ(nearest_name("speed", kIdleKeys), std::nullopt);
  EXPECT_EQ(nearest_name("wndw", kIdleKeys), std::nullopt);  // 2 from window: 1 for 4 letters
  constexpr std::array<std::string_view, 2> twins{"ab_x", "ab_y"};
  EXPECT_EQ(nearest_name("ab_z", twins), std::nullopt);
}

TEST(NearestName, LooksAtNoNameLongerThanItsBound) {
  const std::string longest(trimd::kMaxSuggestedNameLength, 'k');
  const std::array<std::string_view, 1> known{longest};
  std::string at_bound = longest;
  at_bound.back() = 'x';
  EXPECT_EQ(nearest_name(at_bound, known), longest);
  EXPECT_EQ(nearest_name(longest + "k", known), std::nullopt);  // one edit, one byte over
  EXPECT_EQ(nearest_name("idle_" + std::string(1 << 20, 'w') + "window", kIdleKeys, "idle"),
            std::nullopt);
}

TEST(UnknownKeyErrors, NameTheKeyTheAdminMostLikelyMeant) {
  EXPECT_EQ(error_of("[idle]\nidle_window = \"3s\"\n"),
            "idle.idle_window: unknown key (did you mean idle.window?)");
  EXPECT_EQ(error_of("[trim]\nchunk_sise = \"64MiB\"\n"),
            "trim.chunk_sise: unknown key (did you mean trim.chunk_size?)");
  EXPECT_EQ(error_of("[[filesystem]]\nmatch = \"/srv\"\nchunk_sise = \"8MiB\"\n"),
            "filesystem.chunk_sise: unknown key (did you mean filesystem.chunk_size?)");
  EXPECT_EQ(error_of("[trimm]\n"), "trimm: unknown key (did you mean [trim]?)");
  EXPECT_EQ(error_of("[[filesytem]]\nmatch = \"/\"\n"),
            "filesytem: unknown key (did you mean [[filesystem]]?)");
}

TEST(UnknownKeyErrors, SayWhichTableAKeyBelongsTo) {
  EXPECT_EQ(error_of("[trim]\nmax_iops = 3\n"),
            "trim.max_iops: unknown key (max_iops is a key of [idle])");
}

TEST(UnknownKeyErrors, AddNothingWhenNoKeyIsNear) {
  EXPECT_EQ(error_of("[idle]\nspeed = 3\n"), "idle.speed: unknown key");
  EXPECT_THAT(error_of("[nonsense]\n"), HasSubstr("(expected [idle], [trim]"));
  EXPECT_THAT(error_of("[idle]\n\"" + std::string(100000, 'w') + "\" = 1\n"),
              Not(HasSubstr("did you mean")));
}

}  // namespace
