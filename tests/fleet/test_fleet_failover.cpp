// The fleet's slots on a three-member etcd cluster when members stop: a
// stopped leader is replaced and the slots go on (the client moves to a
// member that answers), and with every member stopped a waiting filesystem
// hears that etcd is unreachable while the event loop keeps its time.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>

#include "coordinator_fixture.hpp"
#include "etcd_cluster.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

long long ms(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

class FleetFailover : public trimd::test::CoordinatorFixture {
 protected:
  void SetUp() override {
    TRIMD_REQUIRE_ETCD();
    TRIMD_REQUIRE_ETCDCTL();
    const auto start = Clock::now();
    cluster_.emplace();
    std::cout << "3-member cluster up with a leader in " << ms(Clock::now() - start) << " ms\n";
    config_.endpoints = cluster_->urls();
    config_.max_concurrent = 1;
    config_.lease_ttl = 5s;
  }

  // web3 holds pool-a's one slot, db1 waits behind it.
  void holder_and_waiter() {
    web3_ = host("web3");
    db1_ = host("db1");
    web3_->request("fs-a", "pool-a", "/srv");
    ASSERT_TRUE(run_until([&] { return web3_->holds("fs-a"); }, 20s)) << "web3 never got the slot";
    db1_->request("fs-b", "pool-a", "/var");
    ASSERT_TRUE(run_until([&] { return told("db1", "fs-b", SlotNews::Kind::Waiting); }, 10s));
  }

  // Runs the loop while another thread waits for a leader other than `old`.
  std::optional<std::size_t> new_leader_while_looping(std::size_t old) {
    auto found = std::async(std::launch::async, [&] {
      return cluster_->wait_for_leader(old, std::chrono::seconds{15});
    });
    run_until([&] { return found.wait_for(0s) == std::future_status::ready; }, 20s);
    return found.get();
  }

  std::optional<trimd::test::EtcdCluster> cluster_;
  std::unique_ptr<Coordinator> web3_, db1_;
};

TEST_F(FleetFailover, AStoppedLeaderIsReplacedAndTheSlotStillPassesOn) {
  const auto leader = cluster_->leader();
  ASSERT_TRUE(leader);
  // Both hosts talk to the leader first: its stop is theirs to get over.
  std::rotate(config_.endpoints.begin(), config_.endpoints.begin() + *leader,
              config_.endpoints.end());
  holder_and_waiter();

  const auto stopped = Clock::now();
  cluster_->member(*leader).pause();
  const auto next = new_leader_while_looping(*leader);
  ASSERT_TRUE(next) << "no new leader after the leader stopped";
  std::cout << "new leader m" << *next + 1 << " after " << ms(Clock::now() - stopped) << " ms\n";

  web3_->release("fs-a");
  const auto released = Clock::now();
  EXPECT_TRUE(run_until([&] { return db1_->holds("fs-b"); }, 20s))
      << "the slot was not passed on after the leader stopped; news:" << news_text();
  std::cout << "slot passed on " << ms(Clock::now() - released) << " ms after the release, "
            << ms(Clock::now() - stopped) << " ms after the leader stopped\n";
  EXPECT_FALSE(told("db1", "fs-b", SlotNews::Kind::Lost)) << "db1's lease lapsed in the failover";
}

TEST_F(FleetFailover, WithEveryMemberStoppedAWaiterHearsUnreachableWhileTheLoopKeepsTime) {
  holder_and_waiter();
  const auto heard_before = news_.size();
  const auto unreachable_now = [&] {
    return std::any_of(news_.begin() + static_cast<std::ptrdiff_t>(heard_before), news_.end(),
                       [](const auto& n) {
                         return n.first == "db1" && n.second.kind == SlotNews::Kind::Unreachable;
                       });
  };
  for (std::size_t i = 0; i < cluster_->size(); ++i) cluster_->member(i).pause();
  const auto stopped = Clock::now();
  // A 50 ms timer keeps firing on time while every etcd call hangs.
  auto last_tick = Clock::now();
  Clock::duration longest_gap{};
  trimd::Timer tick(loop_, [&] {
    longest_gap = std::max(longest_gap, Clock::now() - last_tick);
    last_tick = Clock::now();
  });
  tick.arm_every(50ms);
  ASSERT_TRUE(run_until(unreachable_now, 20s)) << "db1 never heard that etcd is unreachable";
  std::cout << "unreachable told " << ms(Clock::now() - stopped) << " ms after every member "
            << "stopped; longest gap between 50 ms ticks " << ms(longest_gap) << " ms\n";
  EXPECT_LT(longest_gap, 250ms) << "the event loop stalled behind etcd";
  auto unreachable = std::find_if(news_.rbegin(), news_.rend(), [](const auto& n) {
    return n.second.kind == SlotNews::Kind::Unreachable;
  });
  EXPECT_NE(unreachable->second.reason.find(config_.endpoints.back()), std::string::npos)
      << "the reason names not every endpoint tried: " << unreachable->second.reason;
}

}  // namespace
