// A fleet peer that writes under the fleet's prefix what it likes, for the
// trust tests: claims with or without a lease, huge values, many keys. It
// talks to etcd through the same client trimd uses, on a loop of its own,
// one call at a time (each call runs that loop until its reply).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etcd_client.hpp"
#include "event_loop.hpp"
#include "fleet_slots.hpp"

namespace trimd::test {

class EtcdPeer {
 public:
  explicit EtcdPeer(const std::vector<std::string>& endpoints);

  // A lease of `ttl_seconds`, not kept alive (a test's length is within it).
  std::int64_t grant(std::int64_t ttl_seconds);
  // Throws std::runtime_error naming etcd's error.
  void put(const std::string& key, const std::string& value, std::int64_t lease = 0);
  void remove(const std::string& key);
  // `count` keys under `backend`'s prefix as slot_key() writes them (hosts
  // "<host_prefix>0", ...), each with `value_bytes` of value, in
  // transactions within etcd's limits (128 puts, 1.5 MiB per request).
  void stuff(const std::string& backend, const std::string& host_prefix, std::size_t count,
             std::size_t value_bytes, std::int64_t lease = 0);

 private:
  etcd::Outcome call(const std::string& path, const nlohmann::json& body);

  EventLoop loop_;
  etcd::Client client_;
};

// A claim's value as trimd writes it.
std::string claim_json(const std::string& host, const std::string& mount_point);

}  // namespace trimd::test
