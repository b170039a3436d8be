// The fleet's slots between hosts, through a real etcd: two trimd hosts
// (two coordinators, each with its own lease) on one backend with one slot.
#include <gtest/gtest.h>

#include <vector>

#include "one_slot_fixture.hpp"

namespace {

using namespace std::chrono_literals;
using trimd::fleet::SlotNews;

using FleetCoordinator = trimd::test::OneSlotFixture;

TEST_F(FleetCoordinator, OneSlotGoesToTheFirstAskerAndTheNextWaitsNamingTheHolder) {
  auto web3 = host("web3");
  auto db1 = host("db1");
  web3->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return web3->holds("fs-a"); }, 20s)) << "web3 never got the slot";
  db1->request("fs-b", "pool-a", "/var");
  ASSERT_TRUE(run_until([&] { return told("db1", "fs-b", SlotNews::Kind::Waiting); }, 10s));
  EXPECT_FALSE(db1->holds("fs-b"));
  const auto waiting = std::find_if(news_.begin(), news_.end(), [](const auto& n) {
    return n.first == "db1" && n.second.kind == SlotNews::Kind::Waiting;
  });
  EXPECT_EQ(waiting->second.reason, "pool-a: 1/1 slots held by web3:/srv");

  web3->release("fs-a");
  EXPECT_TRUE(run_until([&] { return db1->holds("fs-b"); }, 10s)) << "the slot was not passed on";
}

TEST_F(FleetCoordinator, AFreedSlotReachesTheWaiterThroughTheWatchNotThePoll) {
  auto web3 = host("web3", 1h);
  auto db1 = host("db1", 1h);  // no poll in this test's time: only the watch can tell
  web3->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return web3->holds("fs-a"); }, 20s)) << news_text();
  db1->request("fs-b", "pool-a", "/var");
  ASSERT_TRUE(run_until([&] { return told("db1", "fs-b", SlotNews::Kind::Waiting); }, 10s))
      << news_text();
  web3->release("fs-a");
  EXPECT_TRUE(run_until([&] { return db1->holds("fs-b"); }, 20s))
      << "the waiter never heard of the freed slot" << news_text();
}

TEST_F(FleetCoordinator, ACrashedHoldersSlotIsFreeAfterItsLeaseExpires) {
  auto crashed = host("crashed");
  crashed->request("fs-a", "pool-a", "/srv");
  ASSERT_TRUE(run_until([&] { return crashed->holds("fs-a"); }, 20s));
  crashed.reset();  // no release, no keep-alive: as kill -9 leaves it
  auto waiter = host("waiter");
  waiter->request("fs-b", "pool-a", "/var");
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(run_until([&] { return waiter->holds("fs-b"); }, 20s)) << "the slot never freed";
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_LE(waited, config_.lease_ttl + 2s);
}

TEST_F(FleetCoordinator, BackendsAreCountedApart) {
  auto a = host("a");
  auto b = host("b");
  a->request("fs-a", "pool-a", "/srv");
  b->request("fs-b", "pool-b", "/srv");
  EXPECT_TRUE(run_until([&] { return a->holds("fs-a") && b->holds("fs-b"); }, 20s));
}

TEST_F(FleetCoordinator, AnUnreachableEtcdIsReportedToAWaitingFilesystem) {
  member_->pause();
  auto lone = host("lone");
  lone->request("fs-a", "pool-a", "/srv");
  EXPECT_TRUE(run_until([&] { return told("lone", "fs-a", SlotNews::Kind::Unreachable); }, 20s));
  EXPECT_FALSE(lone->holds("fs-a"));
  member_->resume();
}

}  // namespace
