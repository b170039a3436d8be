// The fleet tier's fixture: a three-member etcd cluster and trimd hosts on
// it (fleet_hosts.hpp), named h1, h2, ... in the order they were made.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etcd_cluster.hpp"
#include "fleet_hosts.hpp"

namespace trimd::test {

class FleetHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Ext4)));
    REQUIRE_TOOLS_OR_FAIL("dbus-daemon", "busctl", "etcd", "etcdctl");
    cluster_.emplace();
    policy_.etcd = cluster_->urls();
  }

  // A host named h<n> with `policy` (its trimd not started yet).
  FleetHost& add_host(const FleetPolicy& policy) {
    hosts_.push_back(std::make_unique<FleetHost>(policy));
    names_[hosts_.back()->mount_point()] = "h" + std::to_string(hosts_.size());
    return *hosts_.back();
  }

  // `count` hosts with policy_, every trimd started.
  void start_hosts(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) add_host(policy_);
    for (auto& host : hosts_) host->start();
  }

  bool finished(FleetHost& host) {
    return !host.trimd().events(EventId::PassFinished, host.mount_point()).empty();
  }

  // "h3 h5 | h1 h2": the holders, then the queue, by create revision.
  std::string claims_text(const ClaimSample& sample) {
    std::string out;
    for (std::size_t i = 0; i < sample.claims.size(); ++i) {
      if (i == policy_.max_concurrent) out += " |";
      out += " " + names_[claim_mount_point(sample.claims[i])];
    }
    return out;
  }

  std::string logs() {
    std::string out;
    for (auto& host : hosts_)
      out += "---- " + names_[host->mount_point()] + "\n" + host->trimd().log();
    return out;
  }

  // Arrival order: by their first slot, hosts that queued later never went
  // ahead of one that queued earlier by more than the coordinator's 1 s poll
  // (two slots freed within one poll go out in the same turn). The queue is
  // the longest one sampled. "" when none did.
  std::string queue_jumps(const std::vector<ClaimSample>& samples) {
    const auto longest = std::max_element(samples.begin(), samples.end(), [](auto& a, auto& b) {
      return a.claims.size() < b.claims.size();
    });
    if (longest == samples.end()) return "no sample";
    std::map<std::string, std::uint64_t> first_held;
    for (auto& host : hosts_) {
      const auto spans = hold_spans(*host);
      if (!spans.empty()) first_held[host->mount_point()] = spans.front().begin_usec;
    }
    constexpr std::uint64_t kPollUsec = 1'200'000;
    std::string jumps;
    const auto& queue = longest->claims;
    for (std::size_t i = 0; i < queue.size(); ++i)
      for (std::size_t j = i + 1; j < queue.size(); ++j) {
        const auto earlier = claim_mount_point(queue[i]), later = claim_mount_point(queue[j]);
        if (first_held[later] + kPollUsec < first_held[earlier])
          jumps += " " + names_[later] + " before " + names_[earlier];
      }
    return jumps;
  }

  std::optional<EtcdCluster> cluster_;  // first made, last gone: after every trimd
  FleetPolicy policy_;
  std::vector<std::unique_ptr<FleetHost>> hosts_;
  std::map<std::string, std::string> names_;  // mount point -> "h1"...
};

}  // namespace trimd::test
