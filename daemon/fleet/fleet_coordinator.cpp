#include "fleet_coordinator.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "etcd_client.hpp"

namespace trimd::fleet {

namespace {

// A lease etcd could not grant is asked for again after this long.
constexpr Duration kGrantRetry = std::chrono::seconds{1};

std::int64_t ttl_seconds(Duration ttl) {
  return std::chrono::duration_cast<std::chrono::seconds>(ttl).count();
}

// The claim's value: who and where, for `trimctl fleet` and other hosts.
std::string claim_value(const std::string& host, const std::string& mount_point) {
  return nlohmann::json{{"host", host}, {"mount_point", mount_point}}.dump();
}

SlotClaim claim_of(const etcd::KeyValue& kv) {
  const auto value = nlohmann::json::parse(kv.value, nullptr, false);
  const auto field = [&](const char* name) {
    return value.is_object() && value.contains(name) && value[name].is_string()
               ? value[name].get<std::string>()
               : std::string("?");
  };
  return SlotClaim{kv.key, kv.create_revision, field("host"), field("mount_point")};
}

void sort_by_arrival(std::vector<SlotClaim>& claims) {
  std::sort(claims.begin(), claims.end(), [](const SlotClaim& a, const SlotClaim& b) {
    return std::tie(a.create_revision, a.key) < std::tie(b.create_revision, b.key);
  });
}

}  // namespace

Coordinator::Coordinator(EventLoop& loop, const FleetConfig& config, std::string host,
                         Listener listener, Duration poll)
    : config_(config), host_(std::move(host)), listener_(std::move(listener)),
      client_(std::make_unique<etcd::Client>(loop, etcd::settings_from(config))),
      keepalive_timer_(loop, [this] { keep_alive(); }), poll_timer_(loop, [this] { poll_all(); }) {
  grant_lease();
  poll_timer_.arm_every(poll);
}

Coordinator::~Coordinator() { *alive_ = false; }

void Coordinator::grant_lease() {
  if (granting_) return;
  granting_ = true;
  client_->call("/v3/lease/grant", etcd::lease_grant_request(ttl_seconds(config_.lease_ttl)),
                [this, alive = alive_](const etcd::Outcome& outcome) {
                  if (!*alive) return;
                  granting_ = false;
                  if (!outcome.reply) {
                    // Asked again soon, not only at the next poll.
                    keepalive_timer_.arm_in(kGrantRetry);
                    return unreachable(outcome.error);
                  }
                  heard_back();
                  try {
                    lease_ = etcd::lease_id_of(*outcome.reply);
                  } catch (const std::exception& e) {
                    keepalive_timer_.arm_in(kGrantRetry);
                    return unreachable(e.what());
                  }
                  keepalive_timer_.arm_every(config_.lease_ttl / 3);
                  for (auto& [id, claim] : claims_) claim.put = false;  // a new lease: claim again
                  for (const auto& [id, claim] : claims_) put_claim(id);
                });
}

void Coordinator::keep_alive() {
  if (lease_ == 0) return grant_lease();
  client_->call("/v3/lease/keepalive", etcd::lease_keepalive_request(lease_),
                [this, alive = alive_](const etcd::Outcome& outcome) {
                  if (!*alive) return;
                  if (!outcome.reply) return unreachable(outcome.error);
                  heard_back();
                  try {
                    if (etcd::ttl_of(*outcome.reply) > 0) return;
                  } catch (const std::exception&) {
                  }
                  // The lease expired (etcd unreachable too long): its keys
                  // are gone, every slot with them.
                  lease_ = 0;
                  for (auto& [id, claim] : claims_)
                    tell(id, claim, SlotNews::Kind::Lost, "the lease expired");
                  grant_lease();
                });
}

void Coordinator::request(const std::string& fs_id, const std::string& backend,
                          const std::string& mount_point) {
  if (claims_.count(fs_id)) return;
  Claim claim;
  claim.backend = backend;
  claim.key = slot_key(backend, host_, fs_id);
  claim.mount_point = mount_point;
  undeleted_.erase(claim.key);  // wanted again: a retried delete must not take it
  claims_[fs_id] = std::move(claim);
  put_claim(fs_id);
}

void Coordinator::put_claim(const std::string& fs_id) {
  if (lease_ == 0) return;  // put when the lease comes
  const auto& claim = claims_.at(fs_id);
  client_->call("/v3/kv/put",
                etcd::put_request(claim.key, claim_value(host_, claim.mount_point), lease_),
                [this, fs_id, alive = alive_](const etcd::Outcome& outcome) {
                  if (!*alive) return;
                  const auto it = claims_.find(fs_id);
                  if (it == claims_.end()) return;
                  if (!outcome.reply) return unreachable(outcome.error);
                  it->second.put = true;
                  try {
                    it->second.put_revision = etcd::revision_of(*outcome.reply);
                  } catch (const std::exception&) {
                    it->second.put_revision = 0;  // judged by every read, as before
                  }
                  read_backend(it->second.backend);
                });
}

void Coordinator::release(const std::string& fs_id) {
  const auto it = claims_.find(fs_id);
  if (it == claims_.end()) return;
  const std::string key = it->second.key;
  claims_.erase(it);
  delete_key(key);
}

void Coordinator::delete_key(const std::string& key) {
  undeleted_.erase(key);
  client_->call("/v3/kv/deleterange", etcd::delete_request(key),
                [this, key, alive = alive_](const etcd::Outcome& outcome) {
                  if (!*alive || outcome.reply) return;
                  // Unless it was claimed again meanwhile (then it is wanted).
                  for (const auto& [id, claim] : claims_)
                    if (claim.key == key) return;
                  undeleted_.insert(key);
                });
}

bool Coordinator::holds(const std::string& fs_id) const {
  const auto it = claims_.find(fs_id);
  return it != claims_.end() && it->second.told == SlotNews::Kind::Granted;
}

void Coordinator::poll_all() {
  for (const auto& key : std::set<std::string>(undeleted_)) delete_key(key);
  if (lease_ == 0) return grant_lease();  // etcd was not there yet, or the lease lapsed
  std::set<std::string> backends;
  for (const auto& [id, claim] : claims_)
    if (claim.put) backends.insert(claim.backend);
  for (const auto& backend : backends) read_backend(backend);
}

void Coordinator::read_backend(const std::string& backend) {
  client_->call("/v3/kv/range", etcd::range_prefix_request(slot_prefix(backend)),
                [this, backend, alive = alive_](const etcd::Outcome& outcome) {
                  if (!*alive) return;
                  if (!outcome.reply) return unreachable(outcome.error);
                  heard_back();
                  try {
                    judge(backend, etcd::kvs_of(*outcome.reply), etcd::revision_of(*outcome.reply));
                  } catch (const std::exception& e) {
                    unreachable(e.what());
                  }
                });
}

void Coordinator::judge(const std::string& backend, const std::vector<etcd::KeyValue>& kvs,
                        std::int64_t revision) {
  std::vector<SlotClaim> claims;
  for (const auto& kv : kvs) claims.push_back(claim_of(kv));
  for (auto& [id, claim] : claims_) {
    if (claim.backend != backend || !claim.put || revision < claim.put_revision) continue;
    const auto standing = standing_of(claims, claim.key, config_.max_concurrent);
    if (!standing)
      tell(id, claim, SlotNews::Kind::Lost, "its claim is gone from etcd");
    else if (standing->holds)
      tell(id, claim, SlotNews::Kind::Granted, {});
    else
      tell(id, claim, SlotNews::Kind::Waiting,
           holders_text(backend, *standing, config_.max_concurrent));
  }
  follow_with_watch(backend);
}

// A backend where a claim waits is watched, so that a freed slot is seen at
// once; the poll stays as the net under a stream that went quiet.
void Coordinator::follow_with_watch(const std::string& backend) {
  const bool waiting = std::any_of(claims_.begin(), claims_.end(), [&](const auto& entry) {
    return entry.second.backend == backend && entry.second.told == SlotNews::Kind::Waiting;
  });
  const auto it = watches_.find(backend);
  if (!waiting) {
    if (it != watches_.end()) {
      client_->cancel(it->second);
      watches_.erase(it);
    }
    return;
  }
  if (it != watches_.end()) return;
  watches_[backend] = client_->stream(
      "/v3/watch", etcd::watch_prefix_request(slot_prefix(backend)),
      [this, backend, alive = alive_](const nlohmann::json& message) {
        if (!*alive) return;
        try {
          // Created: what changed between the last read and now is read too.
          const bool created = message.contains("result") && message["result"].is_object() &&
                               message["result"].value("created", false);
          if (created || etcd::watch_events_in(message) > 0) read_backend(backend);
        } catch (const std::exception& e) {
          spdlog::debug("fleet: {}", e.what());
        }
      },
      [this, backend, alive = alive_](const etcd::Outcome& outcome) {
        if (!*alive) return;
        spdlog::debug("fleet: the watch on {} ended: {}", backend, outcome.error);
        watches_.erase(backend);  // the next read opens another
      });
}

void Coordinator::tell(const std::string& fs_id, Claim& claim, SlotNews::Kind kind,
                       std::string reason) {
  if (claim.told == kind && kind != SlotNews::Kind::Waiting) return;
  claim.told = kind;
  if (kind == SlotNews::Kind::Lost) claim.put = false;
  listener_(SlotNews{fs_id, kind, std::move(reason)});
}

void Coordinator::unreachable(const std::string& error) {
  spdlog::debug("fleet: etcd: {}", error);
  // Silent for longer than the lease lives: etcd may have dropped the lease
  // and handed its slots on, so a slot held on it is no longer ours.
  const bool lease_lapsed = SteadyClock::now() - last_reply_ > config_.lease_ttl;
  if (lease_lapsed && lease_ != 0) {
    lease_ = 0;
    for (auto& [id, claim] : claims_)
      if (claim.told == SlotNews::Kind::Granted)
        tell(id, claim, SlotNews::Kind::Lost, "etcd unreachable for longer than the lease TTL");
  }
  for (auto& [id, claim] : claims_)
    if (claim.told != SlotNews::Kind::Granted) tell(id, claim, SlotNews::Kind::Unreachable, error);
}

void Coordinator::read_claims(const std::string& backend, ClaimsRead done) {
  client_->call("/v3/kv/range", etcd::range_prefix_request(slot_prefix(backend)),
                [this, done = std::move(done), alive = alive_](const etcd::Outcome& outcome) {
                  if (!*alive) return;
                  if (!outcome.reply) return done(std::nullopt, {}, outcome.error);
                  std::vector<SlotClaim> claims;
                  try {
                    for (const auto& kv : etcd::kvs_of(*outcome.reply))
                      claims.push_back(claim_of(kv));
                  } catch (const std::exception& e) {
                    return done(std::nullopt, {}, e.what());
                  }
                  sort_by_arrival(claims);
                  std::vector<std::string> ours;
                  for (const auto& [id, claim] : claims_) ours.push_back(claim.key);
                  done(claims, ours, {});
                });
}

void Coordinator::revoke(std::function<void()> done) {
  if (lease_ == 0) return done();
  claims_.clear();
  // etcd's LeaseRevokeRequest: the lease id as an int64 (a JSON string).
  client_->call("/v3/lease/revoke", nlohmann::json{{"ID", std::to_string(lease_)}},
                [done = std::move(done), alive = alive_](const etcd::Outcome&) {
                  if (*alive) done();
                });
  lease_ = 0;
}

}  // namespace trimd::fleet
