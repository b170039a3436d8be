// A three-member etcd cluster on loopback for the fleet tests: who leads,
// and a member stopped (SIGSTOP), continued or killed at will. Every member
// is stopped and every data dir removed with the cluster.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etcd_member.hpp"

namespace trimd::test {

class EtcdCluster {
 public:
  // Starts `size` members and waits until one leads (throws after 20 s).
  explicit EtcdCluster(std::size_t size = 3);
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  std::vector<std::string> urls() const;
  std::size_t size() const { return members_.size(); }
  EtcdProcess& member(std::size_t index) { return *members_.at(index); }

  // The member that answers and says it leads (etcdctl endpoint status);
  // nothing while none does (an election under way, a stopped leader).
  std::optional<std::size_t> leader() const;
  // Waits for a leader other than `old` (or any, without one).
  std::optional<std::size_t> wait_for_leader(std::optional<std::size_t> other_than,
                                             std::chrono::milliseconds limit) const;

 private:
  void start_members(std::size_t size);

  TempDir dir_{"trimd-etcd-cluster-"};
  std::vector<std::unique_ptr<EtcdProcess>> members_;
};

// Skips without etcdctl (Debian etcd-client); under CI=true it fails.
#define TRIMD_REQUIRE_ETCDCTL() TRIMD_REQUIRE_PROGRAM("etcdctl")

}  // namespace trimd::test
