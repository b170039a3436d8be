// This host's side of the fleet (docs/fleet.md): one etcd lease kept alive
// while trimd lives, one claim key per filesystem that wants to trim, and
// the answer "holds a slot" or "waits behind these" for each, from a view
// of the claims under its backend's prefix (claim_view.hpp) that one range
// read and then the watch keep current. Asynchronous on the event loop like
// the client under it: nothing here blocks, and nothing etcd sends costs
// more than the client's and the view's bounds.
//
// Two promises hold whatever etcd or a peer does:
// - A slot is told held only while etcd has confirmed this host's lease
//   recently enough: a holder that cannot renew stops before the lease can
//   expire on etcd's side (fence_margin()), so no other host is handed its
//   slot while it still trims.
// - "Unreachable" (which on_unreachable may answer by trimming alone) means
//   the lease itself cannot be renewed. A slow, huge or malformed answer to
//   a read is an error of that read: the filesystem waits.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "event_loop.hpp"
#include "fleet_config.hpp"
#include "fleet_report.hpp"
#include "fleet_slots.hpp"
#include "time.hpp"

// The client and the views are held by pointer so that this header, and
// every file that includes it, does without nlohmann/json.hpp and curl.h
// (seconds of compile time each).
namespace trimd::etcd {
class Client;
struct Outcome;
struct WatchMessage;
}  // namespace trimd::etcd

namespace trimd::fleet {

class ClaimView;

// How long before the lease could expire on etcd's side a holder stops:
// time for its runner to be killed and its last discard to complete.
Duration fence_margin(Duration lease_ttl);

// Reads of one backend's prefix start at most this often, however many
// watch events or GetFleet callers ask; and a report is answered from a
// view at most this old (or from a watched one).
inline constexpr Duration kMinReadInterval = std::chrono::seconds{1};
// ... and at most this often for a holder whose watch dropped messages for
// a bound: the delete of its own claim may be among them.
inline constexpr Duration kHolderReadInterval = std::chrono::milliseconds{250};
// GetFleet callers waiting for a read, all backends together; more are
// answered "busy" at once.
inline constexpr std::size_t kMaxWaitingReports = 64;
// Waiters beyond the slots that watch the prefix: a waiter is near when at
// most this many claims that count stand between it and a slot. The others
// read a page of the prefix now and then (far_pacing.hpp), so that a put or
// a delete goes to the holders and the near waiters, not to every waiter.
// Enough that a line moving at several hand-overs a second does not pass a
// far waiter between two of its reads (kFarReadMax apart at most).
inline constexpr unsigned kNearWaiters = 64;
// Claims read past the near window in a far waiter's page.
inline constexpr unsigned kPageBeyondWindow = 32;

class Coordinator {
 public:
  using Listener = std::function<void(const SlotNews&)>;

  // `poll` is how often the claims of a backend with a claim are read again
  // whatever the watch said: the net under a watch that went quiet.
  Coordinator(EventLoop& loop, const FleetConfig& config, std::string host, Listener listener,
              Duration poll = std::chrono::seconds{30});
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Queue `fs_id` for a slot of `backend`; Granted comes when it holds one.
  void request(const std::string& fs_id, const std::string& backend,
               const std::string& mount_point);
  // Give the slot (or the place in the queue) back.
  void release(const std::string& fs_id);

  bool holds(const std::string& fs_id) const;

  // GetFleet: the claims of `backends` from their views, each no older
  // than kMinReadInterval (or followed by a watch); one read serves every
  // caller that asked meanwhile.
  void report(const std::vector<std::string>& backends, std::function<void(FleetReport)> done);

  // Stopping: the lease is revoked, every claim on it goes with it; `done`
  // runs when etcd answered (or could not be reached).
  void revoke(std::function<void()> done);

  const FleetConfig& config() const { return config_; }

  // What the coordinator has asked of etcd, for tests and the simulator.
  struct Counters {
    std::uint64_t reads = 0;           // range reads of a prefix
    std::uint64_t read_errors = 0;     // ... that failed
    std::uint64_t watches = 0;         // watch streams opened
    std::uint64_t watch_messages = 0;  // ... and what came through them
    std::uint64_t keepalives = 0;      // lease renewals sent
    std::uint64_t lease_failures = 0;  // grants and renewals that failed
    std::uint64_t puts = 0;            // claims written
    std::uint64_t deletes = 0;         // claims deleted
    std::uint64_t fences = 0;          // held slots stopped for an unconfirmed lease
    std::uint64_t far_reads = 0;       // reads paced for a waiter far from a slot
  };
  const Counters& counters() const { return counters_; }
  std::int64_t lease() const { return lease_; }

 private:
  struct Claim {
    std::string backend;
    std::string key;
    std::string mount_point;
    bool put = false;  // the key is in etcd
    bool putting = false;
    // etcd's revision after the put: a view older than it cannot tell
    // whether the key is there.
    std::int64_t put_revision = 0;
    std::optional<SlotNews::Kind> told;
    std::string told_reason;
  };
  struct Backend;

  // The lease (fleet_coordinator.cpp).
  void grant_lease();
  void keep_alive();
  void lease_confirmed(SteadyPoint sent, std::int64_t ttl_seconds);
  void fence();
  bool lease_live() const;
  void unreachable(const std::string& error);
  void put_claim(const std::string& fs_id);
  void delete_key(const std::string& key);
  void poll_all();
  void tell(const std::string& fs_id, Claim& claim, SlotNews::Kind kind, std::string reason);

  // The backends' views (fleet_backends.cpp).
  Backend& backend(const std::string& name);
  void want_read(Backend& backend, bool at_once, Duration interval = kMinReadInterval);
  void start_read(Backend& backend);
  void on_read(const std::string& name, std::int64_t revision_at_send, bool keys_only,
               const etcd::Outcome& outcome);
  void read_failed(Backend& backend, const std::string& error);
  void judge_soon(Backend& backend);
  void judge(Backend& backend);
  void pace(Backend& backend, bool near, std::optional<std::int64_t> far_claim);
  std::size_t near_window() const;
  bool view_holds_ours(const Backend& backend) const;
  bool holds_a_slot(const Backend& backend) const;
  void follow(Backend& backend);
  void follow_failover();
  // nullptr: messages were dropped for a bound.
  void on_watch(const std::string& name, std::uint64_t stream, const etcd::WatchMessage* message);
  void answer_reports(Backend& backend);
  FleetReport gather_report(const std::vector<std::string>& names) const;
  void forget_idle_backends();
  void log_ignored(Backend& backend);
  std::vector<std::string> our_keys(const std::string& backend) const;

  EventLoop& loop_;
  FleetConfig config_;
  std::string host_;
  Listener listener_;
  std::unique_ptr<etcd::Client> client_;
  std::int64_t lease_ = 0;
  bool granting_ = false;
  // The send time of the last renewal etcd confirmed, and the TTL it gave:
  // etcd cannot expire the lease before confirmed_at_ + confirmed_ttl_.
  std::optional<SteadyPoint> confirmed_at_;
  Duration confirmed_ttl_{};
  bool lease_failing_ = false;  // the last grant or renewal failed
  Timer keepalive_timer_;
  Timer fence_timer_;
  Timer poll_timer_;
  Duration poll_;
  std::map<std::string, Claim> claims_;  // by fs id
  std::map<std::string, std::unique_ptr<Backend>> backends_;
  // Keys of released claims etcd did not delete (unreachable): deleted again
  // at every poll, or they would hold a slot as long as the lease lives.
  std::set<std::string> undeleted_;
  std::size_t waiting_reports_ = 0;
  Counters counters_;
  std::minstd_rand random_{std::random_device{}()};  // the far reads' jitter
  // Outlives the coordinator's callbacks: a reply after destruction is dropped.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace trimd::fleet
