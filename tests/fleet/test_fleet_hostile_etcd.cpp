// An etcd that lies (hostile_etcd.hpp) against the real coordinator and
// client: whatever it sends, the loop's work per turn stays under 50 ms of
// CPU, memory and open files stay bounded, a lie is a named error that
// makes the filesystem wait, and etcd is never called unreachable while it
// renews the lease (docs/fleet.md, "Trust").
#include <gtest/gtest.h>

#include <algorithm>

#include "coordinator_fixture.hpp"
#include "hostile_etcd.hpp"
#include "loop_probe.hpp"

namespace {

using namespace std::chrono_literals;
using trimd::fleet::SlotNews;
using trimd::test::HostileEtcd;

constexpr auto kLoopBudget = 50ms;
constexpr std::size_t kMaxRss = 128u << 20;
constexpr std::size_t kMaxOpenFiles = 128;

class AHostileEtcd : public trimd::test::CoordinatorFixture {
 protected:
  void start(HostileEtcd::Range range, HostileEtcd::Watch watch) {
    etcd_.emplace(range, watch);
    config_.endpoints = {etcd_->url()};
    config_.max_concurrent = 1;
    config_.lease_ttl = 5s;
    probe_.emplace(loop_);
  }

  // Runs the loop for `how_long` whatever happens.
  void run_for(trimd::Duration how_long) {
    run_until([] { return false; }, how_long);
  }

  bool told_kind(SlotNews::Kind kind) const {
    return std::any_of(news_.begin(), news_.end(),
                       [&](const auto& n) { return n.second.kind == kind; });
  }

  // The last reason a host heard while waiting.
  std::string waiting_reason(const std::string& host) const {
    for (auto it = news_.rbegin(); it != news_.rend(); ++it)
      if (it->first == host && it->second.kind == SlotNews::Kind::Waiting) return it->second.reason;
    return {};
  }

  void expect_bounded() const {
    EXPECT_LT(probe_->longest_busy(), kLoopBudget)
        << "the loop's thread was busy that long between two turns (wall lateness "
        << probe_->latest().count() << " us)";
    EXPECT_LT(trimd::test::peak_rss_bytes(), kMaxRss);
    EXPECT_LT(trimd::test::open_files(), kMaxOpenFiles);
  }

  std::optional<HostileEtcd> etcd_;
  std::optional<trimd::test::LoopProbe> probe_;
};

TEST_F(AHostileEtcd, ThatSendsAWatchLineWithoutEndCostsTheLoopNoMoreThanItsBound) {
  start(HostileEtcd::Range::Honest, HostileEtcd::Watch::EndlessLine);
  auto host = this->host("web3");
  host->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return host->holds("fs-a"); }, 10s)) << news_text();
  const auto reads_before = host->counters().reads;
  run_for(5s);
  EXPECT_GT(etcd_->bytes_sent(), 20u << 20) << "the attack did not happen";
  EXPECT_TRUE(host->holds("fs-a")) << news_text();
  EXPECT_LE(host->counters().reads - reads_before, 5u + 2u + host->counters().lease_failures)
      << "reads are paced at one a second";
  expect_bounded();
}

TEST_F(AHostileEtcd, ThatFloodsTheWatchIsFollowedWithoutAReadPerEvent) {
  start(HostileEtcd::Range::Honest, HostileEtcd::Watch::Flood);
  auto host = this->host("web3");
  host->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return host->holds("fs-a"); }, 10s)) << news_text();
  const auto reads_before = host->counters().reads;
  run_for(3s);
  EXPECT_GT(host->counters().watch_messages, 1000u) << "the flood did not come through";
  // A holder whose watch dropped messages for a bound reads again at most
  // every kHolderReadInterval (250 ms); a renewal that failed on the loaded
  // machine earns one read at once when the lease is confirmed again.
  EXPECT_LE(host->counters().reads - reads_before, 3u * 4u + 2u + host->counters().lease_failures)
      << host->counters().watch_messages << " messages" << news_text();
  EXPECT_TRUE(host->holds("fs-a"));
  expect_bounded();
}

// Says 550 MB are coming: the client stops at its bound (1 MiB), reads the
// keys only (which the liar pads too), and the filesystem waits, naming it.
TEST_F(AHostileEtcd, ThatPadsItsRangeReplyIsCutAtTheBoundAndTheFilesystemWaits) {
  start(HostileEtcd::Range::Padded, HostileEtcd::Watch::Honest);
  auto host = this->host("web3");
  host->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return !waiting_reason("web3").empty(); }, 10s)) << news_text();
  run_for(3s);
  EXPECT_NE(waiting_reason("web3").find("bound"), std::string::npos) << news_text();
  EXPECT_FALSE(host->holds("fs-a"));
  EXPECT_FALSE(told_kind(SlotNews::Kind::Unreachable)) << "the lease was renewed all along";
  EXPECT_LE(host->counters().reads, 2u * (3u + 2u));
  expect_bounded();
}

TEST_F(AHostileEtcd, ThatSendsAMegabyteOfEmptyObjectsIsRefusedBeforeParsing) {
  start(HostileEtcd::Range::EmptyObjects, HostileEtcd::Watch::Honest);
  auto host = this->host("web3");
  host->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return !waiting_reason("web3").empty(); }, 10s)) << news_text();
  run_for(2s);
  EXPECT_NE(waiting_reason("web3").find("JSON values"), std::string::npos) << news_text();
  EXPECT_FALSE(host->holds("fs-a"));
  EXPECT_FALSE(told_kind(SlotNews::Kind::Unreachable));
  expect_bounded();
}

TEST_F(AHostileEtcd, ThatNestsItsReplyDeepIsRefusedNotReadAsAnEmptyPrefix) {
  start(HostileEtcd::Range::DeepArray, HostileEtcd::Watch::Honest);
  auto host = this->host("web3");
  host->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return !waiting_reason("web3").empty(); }, 10s)) << news_text();
  run_for(2s);
  EXPECT_NE(waiting_reason("web3").find("nested deeper"), std::string::npos) << news_text();
  EXPECT_FALSE(told_kind(SlotNews::Kind::Lost)) << "a claim never seen gone was told lost";
  EXPECT_FALSE(host->holds("fs-a"));
  expect_bounded();
}

TEST_F(AHostileEtcd, WhoseRevisionFallsIsNamedToTheWaiter) {
  start(HostileEtcd::Range::RevisionFalls, HostileEtcd::Watch::Honest);
  auto web3 = host("web3");
  web3->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return web3->holds("fs-a"); }, 10s)) << news_text();
  auto db1 = host("db1");
  db1->request("fs-b", "pool-a", "/var");
  EXPECT_TRUE(run_until(
      [&] { return waiting_reason("db1").find("went backwards") != std::string::npos; }, 10s))
      << news_text();
  EXPECT_FALSE(db1->holds("fs-b"));
  expect_bounded();
}

}  // namespace
