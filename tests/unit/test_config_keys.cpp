// The table of policy keys (lib/policy/config_keys.cpp): every key is read
// where its descriptor says, and its documented default is the compiled-in one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "config.hpp"
#include "config_keys.hpp"

namespace {

using testing::HasSubstr;
using trimd::Config;
using trimd::ConfigError;
using trimd::ConfigKey;
using trimd::KeyScope;

std::string name_of(const ConfigKey& key) {
  return std::string(key.section) + "." + std::string(key.name);
}

// Every setting a policy holds but its rules. (A Config cannot be compared
// whole: a rule's changes are functions.)
void expect_same_settings(const Config& a, const Config& b) {
  EXPECT_EQ(a.sample_interval, b.sample_interval);
  EXPECT_EQ(a.preempt_interval, b.preempt_interval);
  EXPECT_EQ(a.preempt_latency, b.preempt_latency);
  EXPECT_TRUE(a.idle == b.idle);
  EXPECT_TRUE(a.trim == b.trim);
  EXPECT_EQ(a.log_level, b.log_level);
  EXPECT_EQ(a.metrics_textfile, b.metrics_textfile);
  EXPECT_EQ(a.fleet, b.fleet);
}

constexpr const char* kEtcd = "etcd = [\"http://127.0.0.1:2379\"]\n";

TEST(ConfigKeys, NameEachKeyOnceWithATypeAndADoc) {
  std::set<std::string> names;
  for (const auto& key : trimd::config_keys()) {
    EXPECT_TRUE(names.insert(name_of(key)).second) << name_of(key) << " twice";
    EXPECT_FALSE(key.type.empty()) << name_of(key);
    EXPECT_FALSE(key.doc.empty()) << name_of(key);
    EXPECT_NE(key.read, nullptr) << name_of(key);
  }
  EXPECT_GE(names.size(), 40u);
}

TEST(ConfigKeys, EachDefaultReadsBackAsTheCompiledInDefault) {
  for (const auto& key : trimd::config_keys()) {
    if (key.default_value.empty()) continue;
    SCOPED_TRACE(name_of(key));
    const bool fleet = key.section == "fleet";
    const std::string text = "[" + std::string(key.section) + "]\n" + (fleet ? kEtcd : "") +
                             std::string(key.name) + " = " + std::string(key.default_value) + "\n";
    Config expected;
    if (fleet) expected = trimd::parse_config(std::string("[fleet]\n") + kEtcd, "fleet.toml");
    expect_same_settings(trimd::parse_config(text, "default.toml"), expected);
  }
}

TEST(ConfigKeys, ARuleAcceptsTheTrimKeysThatApplyPerFilesystemAndRefusesTheRest) {
  for (const auto& key : trimd::config_keys()) {
    if (key.section != "trim") continue;
    SCOPED_TRACE(name_of(key));
    const std::string text = "[[filesystem]]\nmatch = \"/srv\"\n" + std::string(key.name) + " = " +
                             std::string(key.default_value) + "\n";
    if (key.scope == KeyScope::AlsoPerFilesystem) {
      const Config config = trimd::parse_config(text, "rule.toml");
      ASSERT_EQ(config.overrides.size(), 1u);
      EXPECT_EQ(config.overrides[0].changes.size(), 1u);
    } else {
      EXPECT_THAT([&] { trimd::parse_config(text, "rule.toml"); },
                  testing::ThrowsMessage<ConfigError>(HasSubstr("can only be set in [trim]")));
    }
  }
}

TEST(ConfigKeys, ATrimKeyInARuleChangesOnlyTheFilesystemsItMatches) {
  const Config config = trimd::parse_config(
      "[[filesystem]]\nmatch = \"/srv\"\nchunk_size = \"8MiB\"\nenabled = false\n", "rule.toml");
  EXPECT_EQ(config.policy_for("/srv", "", "ext4").chunk_bytes, 8u << 20);
  EXPECT_FALSE(config.policy_for("/srv", "", "ext4").enabled);
  EXPECT_TRUE(config.policy_for("/home", "", "ext4") == trimd::TrimPolicy{});
}

TEST(ConfigKeys, AnUnknownTableNamesEveryTableOfTheKeys) {
  EXPECT_THAT([] { trimd::parse_config("[speed]\n", "t.toml"); },
              testing::ThrowsMessage<ConfigError>(HasSubstr(
                  "speed: unknown key (expected [idle], [trim], [log], [metrics], [fleet] or "
                  "[[filesystem]])")));
}

}  // namespace
