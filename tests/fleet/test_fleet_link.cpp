// The daemon's gate to the fleet when [fleet] cannot be acted on: no etcd
// needed, since nothing may be sent.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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

// An etcd that accepts connections and never answers: a read stays in flight.
class SilentEtcd {
 public:
  SilentEtcd() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("cannot listen on loopback");
    port_ = ntohs(address.sin_port);
  }
  ~SilentEtcd() { ::close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_;
  unsigned port_ = 0;
};

TEST(FleetLink, AReadInFlightIsAnsweredWhenTheFleetConfigurationChanges) {
  SilentEtcd etcd;
  trimd::EventLoop loop;
  FleetLink link(loop, "web3", [](const std::vector<SlotNews>&) {});
  FleetConfig config;
  config.endpoints = {etcd.url()};
  config.backend = "pool-a";
  link.follow(config);
  ASSERT_NE(link.coordinator(), nullptr);
  std::optional<FleetReport> report;
  link.report({"pool-a"}, [&](FleetReport r) { report = std::move(r); });
  trimd::test::run_loop_until(
      loop, [&] { return report.has_value(); }, 300ms);
  ASSERT_FALSE(report.has_value()) << "the silent etcd answered";
  link.follow(std::nullopt);  // a reload without [fleet]
  ASSERT_TRUE(report.has_value()) << "GetFleet would wait for its D-Bus timeout";
  EXPECT_EQ(report->status, FleetReport::Status::Unreachable);
  EXPECT_NE(report->error.find("changed during the read"), std::string::npos) << report->error;
}

}  // namespace
