// Coordinators on one real etcd member with one slot per backend: the
// setting most fleet tests start from (one holder, everyone else waits).
#pragma once

#include <chrono>
#include <optional>

#include "coordinator_fixture.hpp"
#include "etcd_member.hpp"

namespace trimd::test {

class OneSlotFixture : public CoordinatorFixture {
 protected:
  // The leases' TTL: short enough for a test to see one run out.
  explicit OneSlotFixture(Duration lease_ttl = std::chrono::seconds{5}) : lease_ttl_(lease_ttl) {}

  // A derived SetUp calls this first and returns if it skipped or failed.
  void SetUp() override {
    TRIMD_REQUIRE_ETCD();
    member_.emplace();
    config_.endpoints = {member_->url()};
    config_.max_concurrent = 1;
    config_.lease_ttl = lease_ttl_;
  }

  bool set_up_failed() const { return IsSkipped() || HasFatalFailure(); }

  std::optional<EtcdMember> member_;

 private:
  Duration lease_ttl_;
};

}  // namespace trimd::test
