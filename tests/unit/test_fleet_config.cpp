// [fleet] in trimd.toml: what it accepts, and errors that name the line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config.hpp"

namespace {

using testing::HasSubstr;
using trimd::ConfigError;
using trimd::parse_config;

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "trimd.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(FleetConfig, AbsentMeansNoCoordination) {
  const auto config = parse_config("[trim]\nenabled = true\n", "trimd.toml");
  EXPECT_FALSE(config.fleet);
  EXPECT_EQ(config.policy_for("/srv", "", "ext4").backend, "");
}

TEST(FleetConfig, ReadsEveryKeyAndGivesEveryFilesystemTheDefaultBackend) {
  const auto config = parse_config(R"([fleet]
etcd = ["https://10.0.0.1:2379/", "https://10.0.0.2:2379"]
ca = "/etc/trimd/ca.pem"
cert = "/etc/trimd/client.pem"
key = "/etc/trimd/client.key"
user = "trimd"
password_file = "/etc/trimd/etcd.pass"
max_concurrent = 2
duty = "1%"
lease_ttl = "20s"
on_unreachable = "wait"
unreachable_after = "5min"
backend = "pool-a"
host = "web3.example.org"

[[filesystem]]
match = "/var/lib/db*"
backend = "san-b"
)",
                                   "trimd.toml");
  ASSERT_TRUE(config.fleet);
  const auto& fleet = *config.fleet;
  EXPECT_EQ(fleet.endpoints,
            (std::vector<std::string>{"https://10.0.0.1:2379", "https://10.0.0.2:2379"}));
  EXPECT_EQ(fleet.ca_file, "/etc/trimd/ca.pem");
  EXPECT_EQ(fleet.max_concurrent, 2u);
  EXPECT_EQ(fleet.duty, 0.01);
  EXPECT_EQ(fleet.lease_ttl, std::chrono::seconds{20});
  EXPECT_EQ(fleet.on_unreachable, trimd::OnUnreachable::Wait);
  EXPECT_EQ(fleet.unreachable_after, std::chrono::minutes{5});
  EXPECT_EQ(fleet.host, "web3.example.org");
  EXPECT_EQ(config.policy_for("/srv", "", "ext4").backend, "pool-a");
  EXPECT_EQ(config.policy_for("/var/lib/db1", "", "ext4").backend, "san-b");
}

TEST(FleetConfig, TheDefaultsAreOneSlotAFifteenSecondLeaseAndLocalAfterTwoMinutes) {
  const auto config = parse_config("[fleet]\netcd = [\"http://127.0.0.1:2379\"]\n", "trimd.toml");
  ASSERT_TRUE(config.fleet);
  EXPECT_EQ(config.fleet->max_concurrent, 1u);
  EXPECT_EQ(config.fleet->lease_ttl, std::chrono::seconds{15});
  EXPECT_EQ(config.fleet->on_unreachable, trimd::OnUnreachable::Local);
  EXPECT_EQ(config.fleet->unreachable_after, std::chrono::minutes{2});
  EXPECT_EQ(config.fleet->backend, "");
}

TEST(FleetConfig, BadValuesAreNamedWithTheirLine) {
  EXPECT_THAT(error_of("[fleet]\netcd = [\"10.0.0.1:2379\"]\n"),
              HasSubstr("trimd.toml:2:9: fleet.etcd: \"10.0.0.1:2379\" is not an etcd client URL"));
  EXPECT_THAT(error_of("[fleet]\netcd = [\"http://a:1\"]\nmax_concurrent = 0\n"),
              HasSubstr("trimd.toml:3:18: fleet.max_concurrent: 0 is not between 1 and 1000"));
  EXPECT_THAT(error_of("[fleet]\netcd = [\"http://a:1\"]\nlease_ttl = \"1s\"\n"),
              HasSubstr("fleet.lease_ttl: 1s is less than 5s"));
  EXPECT_THAT(error_of("[fleet]\netcd = [\"http://a:1\"]\non_unreachable = \"panic\"\n"),
              HasSubstr("fleet.on_unreachable: \"panic\" is not a choice"));
  EXPECT_THAT(error_of("[fleet]\netcd = [\"http://a:1\"]\nbackend = \"pool/a\"\n"),
              HasSubstr("fleet.backend: \"pool/a\" is not a backend name"));
  EXPECT_THAT(error_of("[fleet]\netcd = [\"http://a:1\"]\nca = \"ca.pem\"\n"),
              HasSubstr("fleet.ca: \"ca.pem\" is not an absolute path"));
  EXPECT_THAT(error_of("[fleet]\netcd = [\"http://a:1\"]\nhost = \"web 3\"\n"),
              HasSubstr("fleet.host: \"web 3\" is not a host name"));
}

TEST(FleetConfig, HalfMadeSettingsAreRefused) {
  EXPECT_THAT(error_of("[fleet]\nmax_concurrent = 2\n"), HasSubstr("fleet: needs etcd"));
  EXPECT_THAT(error_of("[fleet]\netcd = []\n"), HasSubstr("names no etcd endpoint"));
  EXPECT_THAT(error_of("[fleet]\netcd = [\"https://a:1\"]\ncert = \"/c.pem\"\n"),
              HasSubstr("cert and key go together"));
  EXPECT_THAT(error_of("[fleet]\netcd = [\"https://a:1\"]\nuser = \"trimd\"\n"),
              HasSubstr("user needs password_file"));
  EXPECT_THAT(error_of("[[filesystem]]\nmatch = \"/srv\"\nbackend = \"pool-a\"\n"),
              HasSubstr("trimd.toml:3:11: filesystem.backend: needs a [fleet] section"));
}

TEST(FleetConfig, AnUnknownFleetKeyIsNamed) {
  EXPECT_THAT(error_of("[fleet]\netcd = [\"http://a:1\"]\nslots = 2\n"),
              HasSubstr("fleet.slots: unknown key"));
}

}  // namespace
