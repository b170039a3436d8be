// Real trimd hosts when etcd fails under them: a stopped leader is replaced
// and the fleet goes on under its cap; with every member stopped, a host
// with on_unreachable = "local" trims alone after unreachable_after and says
// so, one with "wait" does not trim, and both answer D-Bus in milliseconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "fleet_hosts_fixture.hpp"
#include "trimd_log.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

long long ms(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// The slowest of a few reads of the manager's State over the host's bus.
Clock::duration slowest_state_read(const FleetHost& host, std::string& failure) {
  Clock::duration slowest{};
  for (int i = 0; i < 5; ++i) {
    const auto start = Clock::now();
    const auto read =
        run_command(host.bus().busctl({"get-property", "org.trimd.trimd1", "/org/trimd/trimd1",
                                       "org.trimd.trimd1.Manager", "State"}),
                    10s);
    slowest = std::max(slowest, Clock::now() - start);
    if (!read.ok()) failure = read.err;
  }
  return slowest;
}

TEST_F(FleetHostsTest, AStoppedEtcdLeaderIsReplacedAndEveryHostStillTrimsUnderTheCap) {
  const auto leader = cluster_->leader();
  ASSERT_TRUE(leader);
  // Every trimd talks to the leader first: its stop is theirs to get over.
  std::rotate(policy_.etcd.begin(), policy_.etcd.begin() + static_cast<std::ptrdiff_t>(*leader),
              policy_.etcd.end());
  policy_.rate_limit = "20MiB";  // ~3 s passes: the leader stops under a held slot
  start_hosts(4);
  ASSERT_TRUE(wait_until(
      [&] {
        return std::any_of(hosts_.begin(), hosts_.end(),
                           [](auto& h) { return !hold_spans(*h).empty(); });
      },
      30s, 50ms))
      << "no host got a slot\n"
      << logs();
  const auto stopped = Clock::now();
  cluster_->member(*leader).pause();
  const auto next = cluster_->wait_for_leader(*leader, 15s);
  ASSERT_TRUE(next) << "no new leader";
  const auto elected = Clock::now() - stopped;
  ASSERT_TRUE(wait_until(
      [&] {
        return std::all_of(hosts_.begin(), hosts_.end(), [&](auto& h) { return finished(*h); });
      },
      50s, 200ms))
      << "not every host finished after the leader stopped\n"
      << logs();
  std::vector<HoldSpan> all;
  for (auto& host : hosts_) {
    const auto spans = hold_spans(*host);
    all.insert(all.end(), spans.begin(), spans.end());
  }
  std::cout << "[fleet] leader stopped under a held slot: m" << *next + 1 << " elected after "
            << ms(elected) << " ms; all 4 passes done " << ms(Clock::now() - stopped)
            << " ms after the stop; most slots held at once " << most_at_once(all) << std::endl;
  EXPECT_LE(most_at_once(all), policy_.max_concurrent);
}

TEST_F(FleetHostsTest, WithEveryEtcdMemberStoppedLocalTrimsAfterUnreachableAfterAndWaitDoesNot) {
  for (std::size_t i = 0; i < cluster_->size(); ++i) cluster_->member(i).pause();
  auto alone = policy_;
  alone.on_unreachable = "local";
  alone.unreachable_after = "2s";
  auto patient = policy_;
  patient.on_unreachable = "wait";
  FleetHost& local = add_host(alone);
  FleetHost& wait = add_host(patient);
  local.start();
  wait.start();
  const auto started = Clock::now();
  ASSERT_TRUE(wait_until([&] { return finished(local); }, 40s, 100ms))
      << "the local host never trimmed alone\n"
      << logs();
  const auto said = local.trimd().events(EventId::FleetUnreachable, local.mount_point());
  EXPECT_EQ(said.size(), 1u) << "trimming without the cap was not said\n" << local.trimd().log();
  std::cout << "[fleet] every etcd member stopped: the local host finished its pass alone "
            << ms(Clock::now() - started) << " ms after start" << std::endl;
  // By now the wait host has been without etcd as long: it must not have trimmed.
  EXPECT_TRUE(wait.trimd().events(EventId::ChunkStarted, wait.mount_point()).empty())
      << "on_unreachable = \"wait\" trimmed without a slot\n"
      << wait.trimd().log();
  std::string failure;
  const auto slowest = slowest_state_read(wait, failure);
  std::cout << "[fleet] D-Bus State read while etcd is stopped: slowest of 5 " << ms(slowest)
            << " ms (busctl included)" << std::endl;
  EXPECT_TRUE(failure.empty()) << failure;
  EXPECT_LT(slowest, 500ms) << "a D-Bus read waited behind etcd";

  for (std::size_t i = 0; i < cluster_->size(); ++i) cluster_->member(i).resume();
  EXPECT_TRUE(wait_until([&] { return finished(wait); }, 40s, 200ms))
      << "the wait host did not trim when etcd came back\n"
      << wait.trimd().log();
}

}  // namespace
}  // namespace trimd::test
