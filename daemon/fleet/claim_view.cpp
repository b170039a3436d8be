#include "claim_view.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "json_bounds.hpp"

namespace trimd::fleet {

namespace {

// A claim's value is a small object; its shape is checked before parsing.
constexpr etcd::JsonLimits kClaimValueLimits{kMaxClaimValueBytes, 2, 16};
// Names in texts for people: a holder's host and mount point are cut here.
constexpr std::size_t kMaxNameBytes = 64;
constexpr std::size_t kHoldersNamed = 3;

std::string string_member(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// `text` cut to `max` bytes, not inside a UTF-8 sequence, marked as cut.
std::string cut_name(const std::string& text, std::size_t max = kMaxNameBytes) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

}  // namespace

const char* to_string(ClaimFault fault) {
  switch (fault) {
    case ClaimFault::None: return "counts";
    case ClaimFault::NoLease: return "no lease";
    case ClaimFault::BadKey: return "not a trimd claim key";
    case ClaimFault::BadValue: return "a value that is not a trimd claim";
    case ClaimFault::OversizedValue: return "a value over the bound";
    case ClaimFault::NoValue: return "its value not read";
  }
  return "unknown";
}

bool counts(ClaimFault fault) {
  return fault != ClaimFault::NoLease && fault != ClaimFault::BadKey;
}

ClaimView::ClaimView(std::string prefix) : prefix_(std::move(prefix)) {}

// Whether a key counts: a lease (etcd ends it with its writer), a key that
// slot_key() could have written, and a small value of the right shape.
ViewClaim ClaimView::judge(const etcd::KeyValue& kv, bool keys_only) const {
  ViewClaim claim;
  claim.key = kv.key;
  claim.create_revision = kv.create_revision;
  claim.lease = kv.lease;
  claim.mount_point = "?";
  const auto parts =
      kv.key.size() <= kMaxClaimKeyBytes ? parse_slot_key(prefix_, kv.key) : std::nullopt;
  if (parts) claim.host = parts->host;
  if (!parts) {
    claim.fault = ClaimFault::BadKey;
    claim.host = kv.key.substr(std::min(prefix_.size(), kv.key.size()));
  } else if (keys_only) {
    claim.fault = ClaimFault::NoValue;
  } else if (kv.value.size() > kMaxClaimValueBytes) {
    claim.fault = ClaimFault::OversizedValue;
  } else {
    const auto value = etcd::parse_bounded(kv.value, kClaimValueLimits);
    const auto host = value.fault == etcd::JsonFault::None && value.value.is_object()
                          ? string_member(value.value, "host")
                          : std::string();
    const auto mount_point =
        host.empty() ? std::string() : string_member(value.value, "mount_point");
    if (host.empty() || mount_point.empty()) {
      claim.fault = ClaimFault::BadValue;
    } else {
      claim.host = host;
      claim.mount_point = mount_point;
    }
  }
  if (parts && kv.lease == 0) claim.fault = ClaimFault::NoLease;
  claim.host = cut_name(claim.host, kMaxClaimKeyBytes);
  return claim;
}

// A key over the bound is not kept (its bytes would be the view's memory):
// it is only counted, as one that does not count.
void ClaimView::insert(ViewClaim claim) {
  erase(claim.key);
  if (claim.key.size() > kMaxClaimKeyBytes) {
    ++oversized_keys_;
    return;
  }
  created_[claim.key] = claim.create_revision;
  Order order{claim.create_revision, claim.key};
  claims_.emplace(std::move(order), std::move(claim));
}

bool ClaimView::erase(const std::string& key) {
  const auto it = created_.find(key);
  if (it == created_.end()) return false;
  claims_.erase(Order{it->second, key});
  created_.erase(it);
  return true;
}

void ClaimView::reset(const etcd::RangeReply& range, bool keys_only) {
  // Names already known survive a read of keys only.
  std::unordered_map<std::string, ViewClaim> known;
  if (keys_only)
    for (auto& [order, claim] : claims_)
      if (claim.fault == ClaimFault::None) known.emplace(claim.key, std::move(claim));
  claims_.clear();
  created_.clear();
  oversized_keys_ = 0;
  keys_only_ = keys_only;
  for (const auto& kv : range.kvs) {
    if (claims_.size() >= static_cast<std::size_t>(kClaimsPerRead)) break;
    auto claim = judge(kv, keys_only);
    const auto was = known.find(kv.key);
    if (claim.fault == ClaimFault::NoValue && was != known.end() &&
        was->second.create_revision == claim.create_revision)
      claim = std::move(was->second);
    insert(std::move(claim));
  }
  revision_ = range.revision;
  keys_in_etcd_ = std::max<std::int64_t>(range.count, static_cast<std::int64_t>(claims_.size()));
  cut_ = range.more || keys_in_etcd_ > static_cast<std::int64_t>(claims_.size());
}

// New keys carry the newest create revision, so they line up behind every
// claim in the view: the view takes them while it has room, and counts them
// once it is cut.
bool ClaimView::apply(const etcd::WatchMessage& message) {
  bool follows = true;
  for (const auto& event : message.events) {
    const auto& kv = event.kv;
    // The events' own revisions, not the message header's: a watch that
    // is catching up sends the store's newest revision with older events.
    revision_ = std::max(revision_, kv.mod_revision);
    if (event.type == etcd::WatchEvent::Type::Delete) {
      const bool was_in_view = erase(kv.key);
      if (kv.key.size() > kMaxClaimKeyBytes && oversized_keys_ > 0) --oversized_keys_;
      if (was_in_view || !cut_) keys_in_etcd_ = std::max<std::int64_t>(keys_in_etcd_ - 1, 0);
      if (was_in_view && cut_) follows = false;  // one past the cut moves in
      continue;
    }
    if (created_.count(kv.key)) {
      insert(judge(kv));  // changed in place: its value or lease
    } else if (!cut_ && claims_.size() < static_cast<std::size_t>(kClaimsPerRead)) {
      insert(judge(kv));
      ++keys_in_etcd_;
    } else {
      cut_ = true;
      ++keys_in_etcd_;
    }
  }
  return follows;
}

ClaimStanding ClaimView::standing(std::string_view key, std::int64_t put_revision,
                                  unsigned max_concurrent) const {
  ClaimStanding out;
  std::size_t counted_before = 0;
  for (const auto& [order, claim] : claims_) {
    if (claim.key == key) {
      out.kind =
          counted_before < max_concurrent ? ClaimStanding::Kind::Holds : ClaimStanding::Kind::Waits;
      out.ahead = out.kind == ClaimStanding::Kind::Waits ? counted_before - max_concurrent + 1 : 0;
      return out;
    }
    if (claim.counts()) ++counted_before;
  }
  // Not in the view: past a cut view's last claim, or gone.
  const bool after_the_cut =
      cut_ && (claims_.empty() || put_revision > claims_.rbegin()->first.first);
  out.kind = after_the_cut ? ClaimStanding::Kind::PastTheView : ClaimStanding::Kind::Gone;
  out.ahead = counted_before;
  return out;
}

std::size_t ClaimView::counted() const {
  return static_cast<std::size_t>(std::count_if(
      claims_.begin(), claims_.end(), [](const auto& entry) { return entry.second.counts(); }));
}

std::int64_t ClaimView::reach(std::size_t window) const {
  std::size_t seen = 0;
  for (const auto& [order, claim] : claims_)
    if (claim.counts() && ++seen == window) return order.first;
  return claims_.empty() ? 0 : claims_.rbegin()->first.first;
}

std::vector<const ViewClaim*> ClaimView::holders(unsigned max_concurrent) const {
  std::vector<const ViewClaim*> out;
  for (const auto& [order, claim] : claims_) {
    if (out.size() >= max_concurrent) break;
    if (claim.counts()) out.push_back(&claim);
  }
  return out;
}

std::string ClaimView::holders_text(std::string_view backend, unsigned max_concurrent) const {
  const auto held = holders(max_concurrent);
  std::string names;
  for (std::size_t i = 0; i < held.size() && i < kHoldersNamed; ++i)
    names += (names.empty() ? "" : ", ") + cut_name(held[i]->host) + ":" +
             cut_name(held[i]->mount_point);
  if (held.size() > kHoldersNamed)
    names += fmt::format(" and {} more", held.size() - kHoldersNamed);
  return fmt::format("{}: {}/{} slots held by {}", cut_name(std::string(backend)), held.size(),
                     max_concurrent, names.empty() ? "nobody" : names);
}

std::vector<const ViewClaim*> ClaimView::ignored() const {
  std::vector<const ViewClaim*> out;
  for (const auto& [order, claim] : claims_)
    if (!claim.counts()) out.push_back(&claim);
  return out;
}

void ClaimView::report(const std::string& backend, unsigned max_concurrent,
                       const std::vector<std::string>& our_keys, FleetReport& out) const {
  FleetBackendSummary summary;
  summary.backend = backend;
  summary.max_concurrent = max_concurrent;
  std::size_t listed_ignored = 0;
  unsigned position = 0;
  for (const auto& [order, claim] : claims_) {
    const bool ours = std::find(our_keys.begin(), our_keys.end(), claim.key) != our_keys.end();
    if (claim.counts()) {
      ++position;
      ++summary.counted;
      if (position > kReportRowsPerBackend && !ours) {
        ++summary.unlisted;
        continue;
      }
    } else {
      ++summary.ignored;
      if (listed_ignored++ >= kReportIgnoredPerBackend) continue;  // counted, not listed
    }
    out.rows.push_back(FleetClaimRow{backend, max_concurrent, claim.counts() ? position : 0,
                                     cut_name(claim.host, 255), cut_name(claim.mount_point, 1024),
                                     claim.counts() && position <= max_concurrent, ours,
                                     claim.fault});
  }
  summary.ignored += oversized_keys_;
  summary.names_unread = keys_only_;
  summary.unread = static_cast<std::uint64_t>(std::max<std::int64_t>(
      keys_in_etcd_ - static_cast<std::int64_t>(claims_.size() + oversized_keys_), 0));
  out.backends.push_back(std::move(summary));
}

}  // namespace trimd::fleet
