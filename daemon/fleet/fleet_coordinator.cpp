// The lease and this host's claims; the backends' views are in
// fleet_backends.cpp.
#include "fleet_coordinator.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "claim_view.hpp"
#include "etcd_client.hpp"
#include "fleet_backend.hpp"
#include "units.hpp"

namespace trimd::fleet {

namespace {

// A lease etcd could not grant is asked for again after this long.
constexpr Duration kGrantRetry = std::chrono::seconds{1};

std::int64_t ttl_seconds(Duration ttl) {
  return std::chrono::duration_cast<std::chrono::seconds>(ttl).count();
}

// The claim's value: who and where, for `trimctl fleet` and other hosts.
std::string claim_value(const std::string& host, const std::string& mount_point) {
  return nlohmann::json{{"host", host}, {"mount_point", mount_point}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

// A fifth of the TTL, at least a second: a runner is killed in tens of
// milliseconds (docs/design.md), the rest covers a slow loop and the
// members' own clocks.
Duration fence_margin(Duration lease_ttl) {
  return std::max<Duration>(std::chrono::seconds{1}, lease_ttl / 5);
}

Coordinator::Coordinator(EventLoop& loop, const FleetConfig& config, std::string host,
                         Listener listener, Duration poll)
    : loop_(loop), config_(config), host_(std::move(host)), listener_(std::move(listener)),
      client_(std::make_unique<etcd::Client>(loop, etcd::settings_from(config))),
      keepalive_timer_(loop, [this] { keep_alive(); }), fence_timer_(loop, [this] { fence(); }),
      poll_timer_(loop, [this] { poll_all(); }), poll_(poll) {
  grant_lease();
  poll_timer_.arm_every(std::min<Duration>(poll_, std::chrono::seconds{5}));
}

Coordinator::~Coordinator() { *alive_ = false; }

void Coordinator::grant_lease() {
  if (granting_) return;
  granting_ = true;
  const auto sent = SteadyClock::now();
  client_->call("/v3/lease/grant", etcd::lease_grant_request(ttl_seconds(config_.lease_ttl)),
                [this, sent, alive = alive_](const etcd::Outcome& outcome) {
                  if (!*alive) return;
                  granting_ = false;
                  std::int64_t ttl = 0;
                  try {
                    if (!outcome.reply) throw std::runtime_error(outcome.error);
                    lease_ = etcd::lease_id_of(*outcome.reply);
                    ttl = etcd::ttl_of(*outcome.reply);
                  } catch (const std::exception& e) {
                    lease_ = 0;
                    keepalive_timer_.arm_in(kGrantRetry);  // again soon, not at the next poll
                    return unreachable(e.what());
                  }
                  keepalive_timer_.arm_every(config_.lease_ttl / 3);
                  for (auto& [id, claim] : claims_) claim.put = claim.putting = false;
                  lease_confirmed(sent, ttl);  // a new lease: every claim is put again
                });
}

void Coordinator::keep_alive() {
  if (lease_ == 0) return grant_lease();
  ++counters_.keepalives;
  const auto sent = SteadyClock::now();
  const auto lease = lease_;
  client_->call("/v3/lease/keepalive", etcd::lease_keepalive_request(lease),
                [this, sent, lease, alive = alive_](const etcd::Outcome& outcome) {
                  if (!*alive || lease != lease_) return;
                  std::int64_t ttl = 0;
                  try {
                    if (!outcome.reply) throw std::runtime_error(outcome.error);
                    ttl = etcd::ttl_of(*outcome.reply);
                  } catch (const std::exception& e) {
                    return unreachable(e.what());
                  }
                  if (ttl > 0) return lease_confirmed(sent, ttl);
                  // The lease expired (not renewed in time): its keys are gone, every
                  // slot with them.
                  lease_ = 0;
                  confirmed_at_.reset();
                  fence_timer_.disarm();
                  for (auto& [id, claim] : claims_)
                    tell(id, claim, SlotNews::Kind::Lost, "the lease expired");
                  grant_lease();
                });
}

// etcd renewed the lease when it got the request, so it cannot expire it
// before `sent` + ttl: a holder may trim until a margin before that.
void Coordinator::lease_confirmed(SteadyPoint sent, std::int64_t ttl_seconds) {
  confirmed_at_ = sent;
  confirmed_ttl_ = std::chrono::seconds{ttl_seconds};
  const auto deadline = sent + confirmed_ttl_ - fence_margin(confirmed_ttl_);
  fence_timer_.arm_in(std::chrono::duration_cast<Duration>(deadline - SteadyClock::now()));
  const bool was_failing = std::exchange(lease_failing_, false);
  for (auto& [id, claim] : claims_)
    if (!claim.put && !claim.putting) put_claim(id);
  if (!was_failing) return;
  // Answers held back while the lease was in doubt: judged again now.
  for (auto& [name, backend] : backends_) want_read(*backend, true);
}

bool Coordinator::lease_live() const {
  return lease_ != 0 && confirmed_at_ &&
         SteadyClock::now() < *confirmed_at_ + confirmed_ttl_ - fence_margin(confirmed_ttl_);
}

// The lease has not been confirmed for long enough that etcd may expire it
// within the margin: every held slot stops now, before etcd can hand it on.
void Coordinator::fence() {
  if (lease_live()) return;  // confirmed again meanwhile
  for (auto& [id, claim] : claims_) {
    if (claim.told != SlotNews::Kind::Granted) continue;
    ++counters_.fences;
    tell(id, claim, SlotNews::Kind::Lost,
         "etcd has not confirmed this host's lease for " +
             format_duration(confirmed_ttl_ - fence_margin(confirmed_ttl_)) +
             ": stopped before the lease can expire and the slot pass on");
  }
}

// The lease cannot be renewed: etcd is unreachable, which on_unreachable
// decides for every claim that holds no slot. A held slot stays held until
// the fence (the lease may still live on etcd's side).
void Coordinator::unreachable(const std::string& error) {
  spdlog::debug("fleet: etcd: {}", error);
  ++counters_.lease_failures;
  lease_failing_ = true;
  for (auto& [id, claim] : claims_)
    if (claim.told != SlotNews::Kind::Granted) tell(id, claim, SlotNews::Kind::Unreachable, error);
}

void Coordinator::request(const std::string& fs_id, const std::string& backend_name,
                          const std::string& mount_point) {
  if (claims_.count(fs_id)) return;
  Claim claim;
  claim.backend = backend_name;
  claim.key = slot_key(backend_name, host_, fs_id);
  claim.mount_point = mount_point;
  undeleted_.erase(claim.key);  // wanted again: a retried delete must not take it
  claims_[fs_id] = std::move(claim);
  backend(backend_name);
  if (lease_failing_)
    tell(fs_id, claims_[fs_id], SlotNews::Kind::Unreachable, "etcd does not renew the lease");
  put_claim(fs_id);
}

void Coordinator::put_claim(const std::string& fs_id) {
  if (lease_ == 0) return;  // put when the lease comes
  auto& asking = claims_.at(fs_id);
  asking.putting = true;
  ++counters_.puts;
  client_->call("/v3/kv/put",
                etcd::put_request(asking.key, claim_value(host_, asking.mount_point), lease_),
                [this, fs_id, alive = alive_](const etcd::Outcome& outcome) {
                  if (!*alive) return;
                  const auto it = claims_.find(fs_id);
                  if (it == claims_.end()) return;
                  Claim& claim = it->second;
                  claim.putting = false;
                  if (!outcome.reply) {
                    // Put again at the next renewal; meanwhile the filesystem waits.
                    if (claim.told != SlotNews::Kind::Granted && !lease_failing_)
                      tell(fs_id, claim, SlotNews::Kind::Waiting,
                           claim.backend + ": cannot write this host's claim: " + outcome.error);
                    return;
                  }
                  claim.put = true;
                  try {
                    claim.put_revision = etcd::revision_of(*outcome.reply);
                  } catch (const std::exception&) {
                    claim.put_revision = 0;  // judged by every view, as before
                  }
                  want_read(backend(claim.backend), true);
                });
}

void Coordinator::release(const std::string& fs_id) {
  const auto it = claims_.find(fs_id);
  if (it == claims_.end()) return;
  const std::string key = it->second.key;
  const std::string backend_name = it->second.backend;
  claims_.erase(it);
  delete_key(key);
  if (const auto b = backends_.find(backend_name); b != backends_.end()) follow(*b->second);
}

void Coordinator::delete_key(const std::string& key) {
  undeleted_.erase(key);
  ++counters_.deletes;
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

std::vector<std::string> Coordinator::our_keys(const std::string& backend_name) const {
  std::vector<std::string> keys;
  for (const auto& [id, claim] : claims_)
    if (claim.backend == backend_name) keys.push_back(claim.key);
  return keys;
}

void Coordinator::poll_all() {
  follow_failover();
  for (const auto& key : std::set<std::string>(undeleted_)) delete_key(key);
  if (lease_ == 0) grant_lease();  // etcd was not there yet, or the lease lapsed
  const auto now = SteadyClock::now();
  for (auto& [name, b] : backends_) {
    if (our_keys(name).empty()) continue;
    if (!b->last_read_start || now - *b->last_read_start >= poll_) want_read(*b, false);
  }
  forget_idle_backends();
}

void Coordinator::tell(const std::string& fs_id, Claim& claim, SlotNews::Kind kind,
                       std::string reason) {
  if (claim.told == kind && (kind != SlotNews::Kind::Waiting || claim.told_reason == reason))
    return;
  claim.told = kind;
  claim.told_reason = reason;
  if (kind == SlotNews::Kind::Lost) claim.put = false;
  listener_(SlotNews{fs_id, kind, std::move(reason)});
}

void Coordinator::revoke(std::function<void()> done) {
  for (auto& [name, b] : backends_)
    if (b->watch) client_->cancel(*b->watch);
  backends_.clear();
  if (lease_ == 0) return done();
  claims_.clear();
  // etcd's LeaseRevokeRequest: the lease id as an int64 (a JSON string).
  client_->call("/v3/lease/revoke", nlohmann::json{{"ID", std::to_string(lease_)}},
                [done = std::move(done), alive = alive_](const etcd::Outcome&) {
                  if (*alive) done();
                });
  lease_ = 0;
  confirmed_at_.reset();
  fence_timer_.disarm();
}

}  // namespace trimd::fleet
