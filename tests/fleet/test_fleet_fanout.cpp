// The watch fan-out is bounded (docs/fleet.md, "At scale"): only the
// holders and the first kNearWaiters waiters watch a backend's prefix; a
// waiter farther back reads a page now and then, at most once a second,
// and watches once a read shows it near. Real coordinators on a real etcd.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "etcd_peer.hpp"
#include "far_pacing.hpp"
#include "one_slot_fixture.hpp"

namespace {

using namespace std::chrono_literals;
using trimd::fleet::Coordinator;
using trimd::fleet::kNearWaiters;
using trimd::fleet::SlotNews;

class AFleetQueue : public trimd::test::OneSlotFixture {
 protected:
  AFleetQueue() : OneSlotFixture(10s) {}

  // Hosts "h0", "h1", ... asking in turn, each after the one before was
  // told where it stands; no poll in a test's time (only the watch and
  // the paced reads tell).
  void line_up(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      const auto name = "h" + std::to_string(i);
      hosts_.push_back(host(name, 1h));
      hosts_.back()->request("fs", "pool-a", "/srv");
      ASSERT_TRUE(run_until([&] { return told_any(name); }, 20s)) << name << news_text();
    }
  }

  bool told_any(const std::string& name) const {
    return told(name, "fs", SlotNews::Kind::Granted) || told(name, "fs", SlotNews::Kind::Waiting);
  }

  // `i` gives its slot back and the next in line holds it.
  void hand_on(std::size_t i) {
    ASSERT_TRUE(run_until([&] { return hosts_[i]->holds("fs"); }, 20s)) << i << news_text();
    hosts_[i]->release("fs");
  }

  const Coordinator::Counters& of(std::size_t i) const { return hosts_[i]->counters(); }

  std::vector<std::unique_ptr<Coordinator>> hosts_;
};

TEST_F(AFleetQueue, OnlyTheHolderAndTheNearWaitersWatchThePrefix) {
  const std::size_t near = 1 + kNearWaiters;  // the holder and the near waiters
  const auto start = std::chrono::steady_clock::now();
  line_up(near + 5);  // after four hand-overs the last is still one past the window
  ASSERT_FALSE(HasFatalFailure());
  const auto settled = [&] {
    for (std::size_t i = 0; i < near; ++i)
      if (of(i).watches == 0) return false;
    for (std::size_t i = near; i < hosts_.size(); ++i)
      if (of(i).far_reads == 0) return false;
    return true;
  };
  ASSERT_TRUE(run_until(settled, 30s)) << "near hosts watch, far ones read again";
  for (std::size_t i = near; i < hosts_.size(); ++i)
    EXPECT_EQ(of(i).watches, 0u) << "h" << i << " is far from the slot and must not watch";

  // Four hand-overs: the first far host is near now, and watches once a
  // paced read shows it.
  for (std::size_t i = 0; i < 4; ++i) hand_on(i);
  EXPECT_TRUE(run_until([&] { return of(near).watches > 0; }, trimd::fleet::kFarReadMax + 10s))
      << "h" << near << " never saw itself near";
  EXPECT_EQ(of(hosts_.size() - 1).watches, 0u) << "the last is still far";
  for (std::size_t i = 4; i < near; ++i) hand_on(i);
  EXPECT_TRUE(run_until([&] { return hosts_[near]->holds("fs"); }, 10s)) << news_text();

  const auto elapsed_s =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start);
  const auto& last = of(hosts_.size() - 1);
  EXPECT_LE(last.reads, static_cast<std::uint64_t>(elapsed_s.count()) + 2)
      << "a far waiter reads at most once a second";
  EXPECT_GE(last.far_reads, 1u);
}

// Keys without a lease under the prefix, ahead of everyone, fill a page:
// they do not count, so a page of them cannot say "near" or "far"; the
// waiter reads the whole bound, finds itself near, and watches.
TEST_F(AFleetQueue, LeaselessJunkAheadDoesNotHideANearWaiter) {
  trimd::test::EtcdPeer peer(config_.endpoints);
  peer.stuff("pool-a", "junk", 4 * (1 + kNearWaiters), 40);  // no lease
  line_up(2);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_TRUE(run_until([&] { return hosts_[0]->holds("fs"); }, 10s)) << news_text();
  EXPECT_TRUE(run_until([&] { return of(1).watches > 0; }, 10s))
      << "h1 is the first waiter behind junk" << news_text();
  hosts_[0]->release("fs");
  EXPECT_TRUE(run_until([&] { return hosts_[1]->holds("fs"); }, 5s)) << news_text();
}

}  // namespace
