// What this host knows of one backend's claims: the first kClaimsPerRead
// keys under the backend's prefix by create revision, as a range read them
// and as the watch on the prefix changed them since, each judged whether it
// counts (docs/fleet.md, "Trust"). Who holds a slot is decided from here,
// and `trimctl fleet` is answered from here: a waiting host re-reads the
// prefix only when its view was cut at the bound and a claim before the
// cut went, not on every event.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "etcd_wire.hpp"
#include "fleet_report.hpp"

namespace trimd::fleet {

// Claims read at once, kept in a view, and their parts' sizes: a claim's
// key is the prefix, a host and a filesystem id; its value is
// {"host": ..., "mount_point": ...}.
inline constexpr std::int64_t kClaimsPerRead = 1024;
inline constexpr std::size_t kMaxClaimKeyBytes = 512;
inline constexpr std::size_t kMaxClaimValueBytes = 1024;

struct ViewClaim {
  std::string key;
  std::int64_t create_revision = 0;
  std::int64_t lease = 0;
  std::string host;         // from the value, else from the key
  std::string mount_point;  // "?" when the value does not say
  ClaimFault fault = ClaimFault::None;
  bool counts() const { return fleet::counts(fault); }
};

// Where one of this host's claims stands in the view.
struct ClaimStanding {
  enum class Kind {
    Holds,        // among the first max_concurrent that count
    Waits,        // behind `ahead` of them
    PastTheView,  // behind every claim of a view cut at kClaimsPerRead
    Gone,         // not there: its lease expired, or someone deleted it
  };
  Kind kind = Kind::Gone;
  std::size_t ahead = 0;
};

class ClaimView {
 public:
  explicit ClaimView(std::string prefix);

  // A range read of the prefix (range_prefix_request(prefix, kClaimsPerRead)),
  // with its values or of keys only.
  void reset(const etcd::RangeReply& range, bool keys_only = false);
  // A watch message's events, in order. False when the view can no longer
  // tell on its own (it was cut at the bound and a claim before the cut
  // went, so one past it moves in): read the prefix again.
  bool apply(const etcd::WatchMessage& message);

  std::int64_t revision() const { return revision_; }
  bool cut() const { return cut_; }  // etcd holds more keys than the view
  std::int64_t keys_in_etcd() const { return keys_in_etcd_; }
  bool has(const std::string& key) const { return created_.count(key) != 0; }
  // Claims in the view that count.
  std::size_t counted() const;
  // How far the view reaches for a waiter that is near when among the
  // first `window` claims that count: the create revision of the
  // window-th of them, or of the view's last claim when fewer count
  // (0: an empty view).
  std::int64_t reach(std::size_t window) const;

  // `key` (put at `put_revision`) among the claims that count.
  ClaimStanding standing(std::string_view key, std::int64_t put_revision,
                         unsigned max_concurrent) const;
  // "pool-a: 4/4 slots held by a:/srv, b:/var, c:/x and 1 more", bounded
  // whatever the claims' names (first kHoldersNamed, each name cut).
  std::string holders_text(std::string_view backend, unsigned max_concurrent) const;

  // GetFleet's rows and summary for this backend, bounded (fleet_report.hpp).
  void report(const std::string& backend, unsigned max_concurrent,
              const std::vector<std::string>& our_keys, FleetReport& out) const;

  // The claims that do not count, oldest first (for the journal).
  std::vector<const ViewClaim*> ignored() const;

 private:
  using Order = std::pair<std::int64_t, std::string>;  // create revision, key
  ViewClaim judge(const etcd::KeyValue& kv, bool keys_only = false) const;
  void insert(ViewClaim claim);
  bool erase(const std::string& key);
  std::vector<const ViewClaim*> holders(unsigned max_concurrent) const;

  std::string prefix_;
  std::map<Order, ViewClaim> claims_;
  std::unordered_map<std::string, std::int64_t> created_;  // key -> create revision
  std::int64_t revision_ = 0;
  std::int64_t keys_in_etcd_ = 0;
  std::size_t oversized_keys_ = 0;  // read, and not kept for their size
  bool cut_ = false;
  bool keys_only_ = false;  // the last read had no values
};

}  // namespace trimd::fleet
