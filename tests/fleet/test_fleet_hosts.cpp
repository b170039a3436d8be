// The fleet tier end to end: real trimd processes, each with its own loop
// filesystem, state dir, private bus and policy, all naming one backend
// with max_concurrent = 2, on a three-member etcd cluster. Never more than
// two filesystems trim at once (from every trimd's log and from etcd's
// claims sampled every 100 ms), every one finishes its pass, and a holder
// killed with SIGKILL frees its slot within the lease TTL for a waiter.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <iostream>
#include <map>
#include <thread>

#include "fleet_hosts_fixture.hpp"
#include "trimd_log.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

// etcd's claims every 100 ms on a thread of its own, until destroyed.
class ClaimSampler {
 public:
  ClaimSampler(std::vector<std::string> etcd, std::string backend)
      : thread_([this, etcd = std::move(etcd), backend = std::move(backend)] {
          while (!stop_) {
            if (auto sample = sample_claims(etcd, backend)) samples_.push_back(std::move(*sample));
            std::this_thread::sleep_for(100ms);
          }
        }) {}
  ~ClaimSampler() { stop(); }
  const std::vector<ClaimSample>& stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return samples_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<ClaimSample> samples_;
  std::thread thread_;
};

// A host held a slot over the whole read, by its own log.
bool held_throughout(const std::vector<HoldSpan>& spans, const ClaimSample& sample) {
  return std::any_of(spans.begin(), spans.end(), [&](const HoldSpan& s) {
    return s.begin_usec <= sample.begin_usec && (s.end_usec == 0 || s.end_usec >= sample.end_usec);
  });
}

TEST_F(FleetHostsTest, EightHostsOnOneBackendNeverTrimMoreThanTwoAtOnceAndEveryOneFinishes) {
  start_hosts(8);
  ClaimSampler sampler(policy_.etcd, policy_.backend);
  // trimctl fleet on the host that queued last, while it waits.
  std::optional<ClaimSample> queued;
  ASSERT_TRUE(wait_until(
      [&] {
        queued = sample_claims(policy_.etcd, policy_.backend);
        return queued && queued->claims.size() >= 4;
      },
      30s, 50ms))
      << "the hosts never queued\n"
      << logs();
  const auto last_queued = claim_mount_point(queued->claims.back());
  const auto& waiter = **std::find_if(hosts_.begin(), hosts_.end(),
                                      [&](auto& h) { return h->mount_point() == last_queued; });
  const auto fleet =
      run_command({TRIMCTL_BINARY, "--address", waiter.bus().address(), "fleet"}, 10s);
  std::cout << "[fleet] trimctl fleet on " << names_[last_queued] << ", waiting:\n" << fleet.out;
  EXPECT_TRUE(fleet.ok()) << fleet.err;
  EXPECT_NE(fleet.out.find("2/2 slots held"), std::string::npos) << fleet.out;
  EXPECT_NE(fleet.out.find(last_queued + " (this trimd)"), std::string::npos) << fleet.out;
  const bool all_done = wait_until(
      [&] {
        return std::all_of(hosts_.begin(), hosts_.end(), [&](auto& h) { return finished(*h); });
      },
      45s, 200ms);
  const auto& samples = sampler.stop();
  ASSERT_TRUE(all_done) << "not every filesystem finished its pass\n" << logs();

  std::vector<HoldSpan> all;
  std::size_t most_claims = 0, disagreements = 0;
  for (auto& host : hosts_) {
    const auto spans = hold_spans(*host);
    EXPECT_FALSE(spans.empty()) << names_[host->mount_point()] << " trimmed without a slot";
    // Every chunk it started, it started holding a slot.
    for (const auto& chunk : host->trimd().events(EventId::ChunkStarted, host->mount_point())) {
      const auto at = field_u64(chunk, "__REALTIME_TIMESTAMP");
      EXPECT_TRUE(std::any_of(spans.begin(), spans.end(),
                              [&](const HoldSpan& s) {
                                return s.begin_usec <= at && (s.end_usec == 0 || at <= s.end_usec);
                              }))
          << names_[host->mount_point()] << " started a chunk without holding a slot";
    }
    // While its log says it holds a slot, etcd has its claim among the first two.
    for (const auto& sample : samples) {
      if (!held_throughout(spans, sample)) continue;
      const auto holders = std::min<std::size_t>(sample.claims.size(), policy_.max_concurrent);
      const auto first = sample.claims.begin();
      if (std::none_of(first, first + static_cast<std::ptrdiff_t>(holders),
                       [&](const auto& c) { return claim_mount_point(c) == host->mount_point(); }))
        ++disagreements;
    }
    all.insert(all.end(), spans.begin(), spans.end());
  }
  std::string transcript;
  std::string last;
  const auto t0 = samples.empty() ? 0 : samples.front().begin_usec;
  for (const auto& sample : samples) {
    most_claims = std::max(most_claims, sample.claims.size());
    const auto text = claims_text(sample);
    if (text == last) continue;
    last = text;
    transcript += "  +" + std::to_string((sample.begin_usec - t0) / 1000) + " ms:" + text + "\n";
  }
  std::cout << "[fleet] " << samples.size() << " samples of etcd's claims (holders | queue), "
            << "as they changed:\n"
            << transcript << "[fleet] most slots held at once by the logs: " << most_at_once(all)
            << ", most claims in etcd at once: " << most_claims << std::endl;
  EXPECT_LE(most_at_once(all), policy_.max_concurrent) << "more filesystems trimmed at once";
  EXPECT_EQ(most_at_once(all), policy_.max_concurrent) << "the cap was never reached: no test";
  EXPECT_GE(most_claims, 3u) << "no filesystem ever waited: the passes did not overlap";
  EXPECT_EQ(disagreements, 0u) << "a trimd held a slot etcd did not give it";
  EXPECT_EQ(queue_jumps(samples), "") << "a host got its slot before one that asked first";
}

TEST_F(FleetHostsTest, AHolderKilledWithSigkillFreesItsSlotWithinTheLeaseTtlForAWaiter) {
  policy_.rate_limit = "6MiB";  // ~10 s passes: the other holder is still at it
  start_hosts(3);
  const auto holding = [&](FleetHost& h) {
    const auto spans = hold_spans(h);
    return !spans.empty() && spans.back().end_usec == 0;
  };
  FleetHost* killed = nullptr;
  FleetHost* waiter = nullptr;
  ASSERT_TRUE(wait_until(
      [&] {
        const auto sample = sample_claims(policy_.etcd, policy_.backend);
        if (!sample || sample.value().claims.size() < 3) return false;
        const auto held =
            std::count_if(hosts_.begin(), hosts_.end(), [&](auto& h) { return holding(*h); });
        return held == 2;
      },
      30s, 100ms))
      << "never two holders and a waiter\n"
      << logs();
  FleetHost* other = nullptr;  // the holder left alone
  for (auto& host : hosts_) {
    if (!holding(*host))
      waiter = host.get();
    else
      (killed ? other : killed) = host.get();
  }
  ASSERT_TRUE(killed && other && waiter);

  const auto t0 = std::chrono::steady_clock::now();
  killed->trimd().send(SIGKILL);
  const bool freed = wait_until(
      [&] {
        const auto sample = sample_claims(policy_.etcd, policy_.backend);
        return sample && std::none_of(sample->claims.begin(), sample->claims.end(), [&](auto& c) {
                 return claim_mount_point(c) == killed->mount_point();
               });
      },
      20s, 100ms);
  const auto freed_after = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(freed) << "the killed holder's claim never left etcd";
  ASSERT_TRUE(wait_until([&] { return !hold_spans(*waiter).empty(); }, 10s, 50ms))
      << "the waiter never got the freed slot\n"
      << logs();
  const auto handed_after = std::chrono::steady_clock::now() - t0;
  const auto ms = [](auto d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  std::cout << "[fleet] kill -9 of a holder: its claim gone from etcd after " << ms(freed_after)
            << " ms, the waiter holds the slot after " << ms(handed_after) << " ms (lease TTL "
            << policy_.lease_ttl << ")" << std::endl;
  EXPECT_LE(freed_after, 6s) << "not free within lease TTL + 1 s";
  // The slot the waiter got is the killed one's: the other still held its own.
  const auto others = hold_spans(*other);
  const auto got = hold_spans(*waiter).front().begin_usec;
  EXPECT_TRUE(others.back().end_usec == 0 || others.back().end_usec > got)
      << "the waiter went on only when the other holder finished";
}

}  // namespace
}  // namespace trimd::test
