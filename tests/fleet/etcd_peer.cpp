#include "etcd_peer.hpp"

#include <algorithm>
#include <stdexcept>

#include "loop_wait.hpp"

namespace trimd::test {

namespace {

etcd::ClientSettings peer_settings(const std::vector<std::string>& endpoints) {
  etcd::ClientSettings settings;
  settings.endpoints = endpoints;
  settings.request_timeout = std::chrono::seconds{10};
  return settings;
}

}  // namespace

std::string claim_json(const std::string& host, const std::string& mount_point) {
  return nlohmann::json{{"host", host}, {"mount_point", mount_point}}.dump();
}

EtcdPeer::EtcdPeer(const std::vector<std::string>& endpoints)
    : client_(loop_, peer_settings(endpoints)) {}

etcd::Outcome EtcdPeer::call(const std::string& path, const nlohmann::json& body) {
  auto outcome = call_and_wait(loop_, client_, path, body, std::chrono::seconds{30});
  if (!outcome.reply) throw std::runtime_error("etcd peer: " + path + ": " + outcome.error);
  return outcome;
}

std::int64_t EtcdPeer::grant(std::int64_t ttl_seconds) {
  return etcd::lease_id_of(*call("/v3/lease/grant", etcd::lease_grant_request(ttl_seconds)).reply);
}

void EtcdPeer::put(const std::string& key, const std::string& value, std::int64_t lease) {
  call("/v3/kv/put", etcd::put_request(key, value, lease));
}

void EtcdPeer::remove(const std::string& key) {
  call("/v3/kv/deleterange", etcd::delete_request(key));
}

void EtcdPeer::stuff(const std::string& backend, const std::string& host_prefix, std::size_t count,
                     std::size_t value_bytes, std::int64_t lease) {
  // etcd takes at most 128 operations and 1.5 MiB (base64 and all) per request.
  const std::size_t per_request =
      std::clamp<std::size_t>((1u << 20) / (value_bytes * 4 / 3 + 200), 1, 128);
  const std::string value(value_bytes, 'v');
  for (std::size_t first = 0; first < count; first += per_request) {
    nlohmann::json puts = nlohmann::json::array();
    for (std::size_t i = first; i < std::min(count, first + per_request); ++i)
      puts.push_back({{"requestPut",
                       etcd::put_request(slot_key(backend, host_prefix + std::to_string(i), "fs"),
                                         value, lease)}});
    call("/v3/kv/txn", nlohmann::json{{"success", puts}});
  }
}

}  // namespace trimd::test
