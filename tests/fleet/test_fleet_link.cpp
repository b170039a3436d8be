// The daemon's gate to the fleet when [fleet] cannot be acted on: no etcd
// needed, since nothing may be sent.
#include <gtest/gtest.h>

#include "fleet_link.hpp"
#include "loop_wait.hpp"

namespace {

using namespace std::chrono_literals;
using trimd::FleetConfig;
using trimd::SlotAnswer;
using trimd::fleet::FleetLink;
using trimd::fleet::FleetReport;
using trimd::fleet::SlotNews;

FleetConfig with_missing_password_file() {
  FleetConfig config;
  config.endpoints = {"http://127.0.0.1:9"};
  config.user = "trimd";
  config.password_file = "/nonexistent/trimd-etcd.password";
  config.backend = "pool-a";
  return config;
}

TEST(FleetLink, AnUnreadablePasswordFileMakesEveryAskUnreachableNamingTheFile) {
  trimd::EventLoop loop;
  std::vector<SlotNews> heard;
  FleetLink link(loop, "web3", [&](const std::vector<SlotNews>& news) {
    heard.insert(heard.end(), news.begin(), news.end());
  });
  EXPECT_FALSE(link.follow(with_missing_password_file())) << "no [fleet] before: nothing lost";
  EXPECT_EQ(link.coordinator(), nullptr);
  link.ask("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(trimd::test::run_loop_until(
      loop, [&] { return !heard.empty(); }, 5s));
  EXPECT_EQ(heard[0].fs_id, "fs-a");
  EXPECT_EQ(heard[0].kind, SlotAnswer::Unreachable);
  EXPECT_NE(heard[0].reason.find("/nonexistent/trimd-etcd.password"), std::string::npos)
      << heard[0].reason;

  std::optional<FleetReport> report;
  link.report({"pool-a"}, [&](FleetReport r) { report = std::move(r); });
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->status, FleetReport::Status::Unreachable);
}

TEST(FleetLink, DroppingFleetSaysTheClaimsAreGone) {
  trimd::EventLoop loop;
  FleetLink link(loop, "web3", [](const std::vector<SlotNews>&) {});
  link.follow(with_missing_password_file());
  EXPECT_TRUE(link.follow(std::nullopt));
  EXPECT_FALSE(link.follow(std::nullopt)) << "unchanged";
  std::optional<FleetReport> report;
  link.report({"pool-a"}, [&](FleetReport r) { report = std::move(r); });
  EXPECT_EQ(report->status, FleetReport::Status::NotConfigured);
}

}  // namespace
