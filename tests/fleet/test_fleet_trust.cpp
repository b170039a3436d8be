// A fleet peer with etcd credentials that writes what it likes under the
// prefix, against the real coordinator on a real etcd: keys without a lease
// hold no slot, a stuffed prefix neither hands a slot out nor makes etcd
// "unreachable", and what a waiting host reads and reports stays bounded
// and paced however many keys there are (docs/fleet.md, "Trust").
#include <gtest/gtest.h>

#include <algorithm>

#include "claim_view.hpp"
#include "etcd_peer.hpp"
#include "loop_probe.hpp"
#include "one_slot_fixture.hpp"

namespace {

using namespace std::chrono_literals;
using trimd::fleet::FleetReport;
using trimd::fleet::SlotNews;
using trimd::test::claim_json;
using trimd::test::EtcdPeer;

class AFleetPeer : public trimd::test::OneSlotFixture {
 protected:
  void SetUp() override {
    OneSlotFixture::SetUp();
    if (set_up_failed()) return;
    peer_.emplace(config_.endpoints);
    probe_.emplace(loop_);
  }

  // A live claim on pool-a's only slot, as another trimd holds it.
  void hold_the_slot() {
    const auto lease = peer_->grant(300);
    peer_->put(trimd::slot_key("pool-a", "holder", "fs"), claim_json("holder", "/srv"), lease);
  }

  bool told_kind(const std::string& host, SlotNews::Kind kind) const {
    return std::any_of(news_.begin(), news_.end(),
                       [&](const auto& n) { return n.first == host && n.second.kind == kind; });
  }

  FleetReport report_of(trimd::fleet::Coordinator& host) {
    std::optional<FleetReport> report;
    host.report({"pool-a"}, [&](FleetReport r) { report = std::move(r); });
    run_until([&] { return report.has_value(); }, 10s);
    return report.value_or(FleetReport{FleetReport::Status::Unreachable, "no answer", {}, {}});
  }

  std::optional<EtcdPeer> peer_;
  std::optional<trimd::test::LoopProbe> probe_;
};

TEST_F(AFleetPeer, ThatWritesAClaimWithoutALeaseBeforeOursHoldsNoSlot) {
  peer_->put(trimd::slot_key("pool-a", "squatter", "fs"), claim_json("squatter", "/x"));
  auto web3 = host("web3");
  web3->request("fs-a", "pool-a", "/srv");
  EXPECT_TRUE(run_until([&] { return web3->holds("fs-a"); }, 20s)) << news_text();
  const auto report = report_of(*web3);
  ASSERT_EQ(report.backends.size(), 1u);
  EXPECT_EQ(report.backends[0].ignored, 1u);
  const auto squatter = std::find_if(report.rows.begin(), report.rows.end(),
                                     [](const auto& row) { return row.host == "squatter"; });
  ASSERT_NE(squatter, report.rows.end());
  EXPECT_EQ(squatter->fault, trimd::fleet::ClaimFault::NoLease);
  EXPECT_EQ(squatter->position, 0u);
}

// ~100 MiB of lease-less keys while a live peer holds the only slot: reads
// with values go over the bound, reads of keys only decide, the lease is
// renewed all along, so the host waits and is never told "unreachable".
TEST_F(AFleetPeer, StuffingThePrefixWhileAnotherHoldsTheSlotNeitherGrantsItNorCutsEtcdOff) {
  hold_the_slot();
  peer_->stuff("pool-a", "stuffing", 100, 1u << 20);
  auto web3 = host("web3");
  web3->request("fs-a", "pool-a", "/srv");
  probe_->reset();  // the peer's writes ran on this thread
  run_until([] { return false; }, 15s);
  EXPECT_FALSE(told_kind("web3", SlotNews::Kind::Granted)) << news_text();
  EXPECT_FALSE(told_kind("web3", SlotNews::Kind::Unreachable)) << news_text();
  EXPECT_TRUE(told_kind("web3", SlotNews::Kind::Waiting)) << news_text();
  EXPECT_LE(web3->counters().reads, 2u * (15u + 3u)) << "reads are paced";
  EXPECT_LT(probe_->longest_busy(), 50ms);
  EXPECT_LT(trimd::test::peak_rss_bytes(), 128u << 20);
  // The holder goes: the stuffing does not stand in the way.
  peer_->remove(trimd::slot_key("pool-a", "holder", "fs"));
  EXPECT_TRUE(run_until([&] { return web3->holds("fs-a"); }, 20s)) << news_text();
}

// 50,000 small keys ahead: the view keeps the first 1,024, a waiting host
// is not re-reading the prefix on every change, and a report is a page.
TEST_F(AFleetPeer, WithFiftyThousandKeysAheadAReportIsAPageAndReadsArePaced) {
  hold_the_slot();
  peer_->stuff("pool-a", "queue", 50000, 40);
  probe_->reset();               // the peer's writes ran on this thread
  auto web3 = host("web3", 1h);  // no poll: only what the watch and the reports ask for
  web3->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return told_kind("web3", SlotNews::Kind::Waiting); }, 30s))
      << news_text();
  EXPECT_LT(probe_->longest_busy(), 50ms) << "reading the first page";
  const auto reads_before = web3->counters().reads;
  // 500 GetFleet callers at once, then churn ahead of the host.
  std::size_t answered = 0;
  for (int i = 0; i < 500; ++i) web3->report({"pool-a"}, [&](FleetReport) { ++answered; });
  for (int i = 0; i < 200; ++i)
    peer_->remove(trimd::slot_key("pool-a", "queue" + std::to_string(i), "fs"));
  probe_->reset();  // the peer's deletes ran on this thread
  run_until([&] { return answered == 500; }, 10s);
  EXPECT_EQ(answered, 500u);
  run_until([] { return false; }, 5s);
  EXPECT_LE(web3->counters().reads - reads_before, 10u)
      << "500 callers and 200 deletes in ~5 s: reads merged and paced at one a second";
  const auto report = report_of(*web3);
  ASSERT_EQ(report.backends.size(), 1u);
  EXPECT_LE(report.rows.size(),
            trimd::fleet::kReportRowsPerBackend + 1 + trimd::fleet::kReportIgnoredPerBackend);
  EXPECT_GT(report.backends[0].unread + report.backends[0].unlisted, 40000u);
  EXPECT_FALSE(web3->holds("fs-a"));
  EXPECT_LT(probe_->longest_busy(), 50ms);
}

TEST_F(AFleetPeer, ThatDeletesOurClaimMakesTheHolderStopAtOnce) {
  auto web3 = host("web3", 1h);
  web3->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return web3->holds("fs-a"); }, 20s)) << news_text();
  peer_->remove(trimd::slot_key("pool-a", "web3", "fs-a"));
  EXPECT_TRUE(run_until([&] { return told_kind("web3", SlotNews::Kind::Lost); }, 5s))
      << "the watch tells the holder, no poll needed" << news_text();
}

}  // namespace
