// The backends' views: one range read of the prefix, then the watch keeps
// the view current. Reads are merged and paced (at most one in flight per
// backend, at most one start per kMinReadInterval unless a claim of this
// host needs it), every watch message updates the view, and the claims are
// judged at most once per loop turn however many messages came. The watch
// itself is in fleet_watch.cpp.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "claim_view.hpp"
#include "etcd_client.hpp"
#include "fleet_backend.hpp"
#include "fleet_coordinator.hpp"
#include "utf8.hpp"

namespace trimd::fleet {

namespace {

// A backend nobody asked about and no claim uses is dropped after this.
constexpr Duration kIdleBackend = std::chrono::seconds{10};
// After a read with values went over the bound, keys only for this long.
constexpr Duration kValuesRetry = std::chrono::seconds{60};
// Ignored keys named in the journal per backend; later ones are counted.
constexpr std::size_t kMaxNamedIgnored = 256;
constexpr std::size_t kNamedPerLine = 5;

std::string read_error_text(const std::string& backend, const std::string& error) {
  return backend + ": cannot read the fleet's claims: " + error;
}

}  // namespace

Coordinator::Backend& Coordinator::backend(const std::string& name) {
  auto& slot = backends_[name];
  if (!slot) {
    slot = std::make_unique<Backend>(
        loop_, name, [this, name] { want_read(*backends_.at(name), false); },
        [this, name] {
          ++counters_.far_reads;
          want_read(*backends_.at(name), false);
        });
  }
  return *slot;
}

void Coordinator::want_read(Backend& b, bool at_once, Duration interval) {
  b.read_wanted = true;
  if (b.reading) return;  // once it is in
  const auto now = SteadyClock::now();
  if (!at_once && b.last_read_start && now - *b.last_read_start < interval) {
    const auto due = std::chrono::duration_cast<Duration>(*b.last_read_start + interval - now);
    // Unless a read is due sooner already.
    if (!b.read_due || *b.read_due <= now || *b.read_due > now + due) {
      b.read_due = now + due;
      b.read_timer.arm_in(due);
    }
    return;
  }
  start_read(b);
}

// With values, unless a read with values went over the bound lately (a
// peer's huge values): then of keys only, which decide the standing alone.
// A page of the near window and kPageBeyondWindow more for this host's own
// claims (enough to tell near from far), all kClaimsPerRead for a report or
// a crowded page.
void Coordinator::start_read(Backend& b) {
  const auto now = SteadyClock::now();
  const bool keys_only = b.values_over_bound_at && now - *b.values_over_bound_at < kValuesRetry;
  const bool whole = b.crowded || !b.reports.empty() || our_keys(b.name).empty();
  const auto limit =
      whole ? kClaimsPerRead : static_cast<std::int64_t>(near_window() + kPageBeyondWindow);
  b.read_wanted = false;
  b.reading = true;
  b.last_read_start = now;
  ++counters_.reads;
  const auto revision_at_send = b.have_view ? b.view.revision() : 0;
  client_->call(
      "/v3/kv/range", etcd::range_prefix_request(slot_prefix(b.name), limit, keys_only),
      [this, name = b.name, revision_at_send, keys_only, alive = alive_](const etcd::Outcome& o) {
        if (*alive) on_read(name, revision_at_send, keys_only, o);
      });
}

void Coordinator::on_read(const std::string& name, std::int64_t revision_at_send, bool keys_only,
                          const etcd::Outcome& outcome) {
  const auto it = backends_.find(name);
  if (it == backends_.end()) return;
  Backend& b = *it->second;
  b.reading = false;
  if (!keys_only && outcome.failure == etcd::Failure::Bound) {
    spdlog::debug("fleet: {}; reading its keys only", read_error_text(name, outcome.error));
    b.values_over_bound_at = SteadyClock::now();
    return start_read(b);
  }
  try {
    if (!outcome.reply) throw std::runtime_error(outcome.error);
    const auto range = etcd::range_of(*outcome.reply);
    if (range.revision < revision_at_send) {
      // Not a reply overtaken by the watch: asked after revision_at_send
      // was seen, etcd answered from before it (a restored or another
      // cluster). The next read is taken as it comes, and this host's
      // claims are written again.
      b.have_view = false;
      for (auto& [id, claim] : claims_)
        if (claim.backend == name && claim.put && !claim.putting) {
          claim.put = false;
          put_claim(id);
        }
      throw std::runtime_error("etcd's revision went backwards: " + std::to_string(range.revision) +
                               " after " + std::to_string(revision_at_send));
    }
    if (!b.have_view || range.revision >= b.view.revision()) {
      b.view.reset(range, keys_only);
      b.have_view = true;
      b.view_at = SteadyClock::now();
      log_ignored(b);
    }  // else the watch is ahead of this reply: the view stays
    b.read_error.clear();
    judge(b);
  } catch (const std::exception& e) {
    read_failed(b, e.what());
  }
  answer_reports(b);
  if (b.read_wanted) want_read(b, false);
}

// A read that failed is an error of that read, not of etcd's reachability
// (which the lease decides): a claim that holds no slot waits, saying why.
void Coordinator::read_failed(Backend& b, const std::string& error) {
  ++counters_.read_errors;
  b.read_error = error;
  spdlog::debug("fleet: {}", read_error_text(b.name, error));
  for (auto& [id, claim] : claims_)
    if (claim.backend == b.name && claim.told != SlotNews::Kind::Granted && !lease_failing_)
      tell(id, claim, SlotNews::Kind::Waiting,
           read_error_text(b.name, escape_bytes_for_line(error)));
  // A far waiter has no watch to fall back on: it tries again soon, not at
  // the next poll (a stopped member fails its reads until the client moves on).
  if (!b.near && !our_keys(b.name).empty())
    b.far_timer.arm_in(jittered(kFarReadFirst, static_cast<std::uint32_t>(random_())));
}

// Once per loop turn however many watch messages came in it.
void Coordinator::judge_soon(Backend& b) {
  if (std::exchange(b.judge_deferred, true)) return;
  loop_.defer([this, name = b.name, alive = alive_] {
    if (!*alive) return;
    const auto it = backends_.find(name);
    if (it == backends_.end()) return;
    it->second->judge_deferred = false;
    judge(*it->second);
  });
}

void Coordinator::judge(Backend& b) {
  if (b.have_view) {
    const auto max = config_.max_concurrent;
    bool judged = false, near = false;
    std::optional<std::int64_t> far_claim;  // the create revision of our first far claim
    for (auto& [id, claim] : claims_) {
      if (claim.backend != b.name || !claim.put || claim.put_revision > b.view.revision()) continue;
      const auto standing = b.view.standing(claim.key, claim.put_revision, max);
      judged = true;
      if (standing.kind == ClaimStanding::Kind::Holds ||
          (standing.kind == ClaimStanding::Kind::Waits && standing.ahead <= kNearWaiters))
        near = true;
      else if (standing.kind != ClaimStanding::Kind::Gone)
        far_claim = std::min(far_claim.value_or(claim.put_revision), claim.put_revision);
      switch (standing.kind) {
        case ClaimStanding::Kind::Holds:
          if (lease_live())
            tell(id, claim, SlotNews::Kind::Granted, {});
          else if (!lease_failing_)
            tell(
                id, claim, SlotNews::Kind::Waiting,
                b.view.holders_text(b.name, max) + "; waiting for etcd to renew this host's lease");
          break;
        case ClaimStanding::Kind::Waits:
          tell(id, claim, SlotNews::Kind::Waiting, b.view.holders_text(b.name, max));
          break;
        case ClaimStanding::Kind::PastTheView:
          tell(id, claim, SlotNews::Kind::Waiting,
               b.view.holders_text(b.name, max) + "; more than " + std::to_string(kClaimsPerRead) +
                   " keys are ahead of this claim (read no further)");
          break;
        case ClaimStanding::Kind::Gone:
          tell(id, claim, SlotNews::Kind::Lost, "its claim is gone from etcd");
          break;
      }
    }
    b.crowded = b.view.cut() && b.view.counted() < near_window();
    if (judged) pace(b, near, far_claim);
  }
  follow(b);
}

// The slots and the near waiters behind them.
std::size_t Coordinator::near_window() const { return config_.max_concurrent + kNearWaiters; }

// Near: the watch tells (follow()). Far: the next page is read when the
// pacing says, whatever the watch did before.
void Coordinator::pace(Backend& b, bool near, std::optional<std::int64_t> far_claim) {
  b.near = near;
  if (near || !far_claim) {
    b.far_timer.disarm();
    b.pacing.reset();
    return;
  }
  // A crowded page cannot tell: the whole read follows as soon as allowed.
  const auto delay =
      b.crowded ? kFarReadMin
                : b.pacing.next(SteadyClock::now(), b.view.reach(near_window()), *far_claim);
  // Jittered, and never later than kFarReadMax: the near window is sized to it.
  b.far_timer.arm_in(std::min(jittered(delay, static_cast<std::uint32_t>(random_())), kFarReadMax));
}

bool Coordinator::holds_a_slot(const Backend& b) const {
  return std::any_of(claims_.begin(), claims_.end(), [&](const auto& c) {
    return c.second.backend == b.name && c.second.told == SlotNews::Kind::Granted;
  });
}

// Every claim of this host on the backend is in the view: a cut view that
// lost a claim ahead of them still tells their standing (new claims line
// up behind them), so the watch needs no read to follow.
bool Coordinator::view_holds_ours(const Backend& b) const {
  const auto keys = our_keys(b.name);
  return !keys.empty() &&
         std::all_of(keys.begin(), keys.end(), [&](const auto& key) { return b.view.has(key); });
}

void Coordinator::log_ignored(Backend& b) {
  std::vector<std::string> named;
  std::size_t unnamed = 0;
  for (const ViewClaim* claim : b.view.ignored()) {
    if (b.named_ignored.count(claim->key)) continue;
    if (b.named_ignored.size() >= kMaxNamedIgnored) {
      ++unnamed;
      continue;
    }
    b.named_ignored.insert(claim->key);
    if (named.size() < kNamedPerLine)
      named.push_back(escape_bytes_for_line(claim->host) + " (" + to_string(claim->fault) + ")");
    else
      ++unnamed;
  }
  if (named.empty()) return;
  spdlog::warn("fleet: {} does not count {} key(s) under its prefix as claims on a slot: {}{}",
               b.name, named.size() + unnamed, fmt::join(named, ", "),
               unnamed ? " and " + std::to_string(unnamed) + " more" : "");
}

void Coordinator::report(const std::vector<std::string>& names,
                         std::function<void(FleetReport)> done) {
  const auto now = SteadyClock::now();
  std::vector<Backend*> stale;
  for (const auto& name : names) {
    Backend& b = backend(name);
    b.last_asked = now;
    if (!(b.have_view && (b.watch_live || now - b.view_at < kMinReadInterval))) stale.push_back(&b);
  }
  if (waiting_reports_ + stale.size() > kMaxWaitingReports)
    return done(
        FleetReport{FleetReport::Status::Busy,
                    std::to_string(waiting_reports_) + " calls are waiting for etcd already",
                    {},
                    {}});
  // Answered once every stale backend's next read is in: one read serves
  // every caller that asked meanwhile.
  struct Gathering {
    std::size_t pending = 0;
    std::function<void()> finish;
  };
  auto gathering = std::make_shared<Gathering>();
  gathering->pending = stale.size() + 1;  // + this call's own, dropped below
  gathering->finish = [this, names, done = std::move(done), alive = alive_] {
    if (*alive) done(gather_report(names));
  };
  for (Backend* b : stale) {
    ++waiting_reports_;
    b->reports.push_back([this, gathering] {
      --waiting_reports_;
      if (--gathering->pending == 0) gathering->finish();
    });
    want_read(*b, false);
  }
  if (--gathering->pending == 0) gathering->finish();
}

FleetReport Coordinator::gather_report(const std::vector<std::string>& names) const {
  FleetReport report;
  for (const auto& name : names) {
    const auto it = backends_.find(name);
    if (it == backends_.end()) continue;
    const Backend& b = *it->second;
    if (b.have_view) {
      b.view.report(name, config_.max_concurrent, our_keys(name), report);
      report.backends.back().error = b.read_error;
      continue;
    }
    report.status = FleetReport::Status::Unreachable;
    report.error = b.read_error.empty() ? "no answer from etcd yet" : b.read_error;
    FleetBackendSummary unread;
    unread.backend = name;
    unread.max_concurrent = config_.max_concurrent;
    unread.error = report.error;
    report.backends.push_back(std::move(unread));
  }
  return report;
}

void Coordinator::answer_reports(Backend& b) {
  for (auto& answer : std::exchange(b.reports, {})) answer();
}

void Coordinator::forget_idle_backends() {
  const auto now = SteadyClock::now();
  for (auto it = backends_.begin(); it != backends_.end();) {
    const Backend& b = *it->second;
    const bool idle = !b.reading && b.reports.empty() && our_keys(it->first).empty() &&
                      now - b.last_asked > kIdleBackend;
    if (idle && b.watch) client_->cancel(*b.watch);
    it = idle ? backends_.erase(it) : std::next(it);
  }
}

}  // namespace trimd::fleet
