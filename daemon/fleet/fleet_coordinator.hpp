// This host's side of the fleet (docs/fleet.md): one etcd lease kept alive
// while trimd lives, one claim key per filesystem that wants to trim, and
// the answer "holds a slot" or "waits behind these" for each, from the
// claims under its backend's prefix (fleet_slots.hpp). Asynchronous on the
// event loop like the client under it: nothing here blocks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "event_loop.hpp"
#include "fleet_config.hpp"
#include "fleet_report.hpp"
#include "fleet_slots.hpp"
#include "time.hpp"

// The client is held by pointer so that this header, and every file that
// includes it, does without nlohmann/json.hpp and curl.h (seconds of
// compile time each).
namespace trimd::etcd {
class Client;
struct KeyValue;
}  // namespace trimd::etcd

namespace trimd::fleet {

class Coordinator {
 public:
  using Listener = std::function<void(const SlotNews&)>;

  // `poll` is how often the claims of every backend with a claim are read
  // again: the net under the watch that sees a freed slot at once.
  Coordinator(EventLoop& loop, const FleetConfig& config, std::string host, Listener listener,
              Duration poll = std::chrono::seconds{5});
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Queue `fs_id` for a slot of `backend`; Granted comes when it holds one.
  void request(const std::string& fs_id, const std::string& backend,
               const std::string& mount_point);
  // Give the slot (or the place in the queue) back.
  void release(const std::string& fs_id);

  bool holds(const std::string& fs_id) const;

  // The claims under `backend`'s prefix now, oldest first, and which of
  // them are this coordinator's; nothing and the error when etcd fails.
  using ClaimsRead =
      std::function<void(const std::optional<std::vector<SlotClaim>>& claims,
                         const std::vector<std::string>& our_keys, const std::string& error)>;
  void read_claims(const std::string& backend, ClaimsRead done);

  // Stopping: the lease is revoked, every claim on it goes with it; `done`
  // runs when etcd answered (or could not be reached).
  void revoke(std::function<void()> done);

  const FleetConfig& config() const { return config_; }

 private:
  struct Claim {
    std::string backend;
    std::string key;
    std::string mount_point;
    bool put = false;  // the key is in etcd
    // etcd's revision after the put: a range read before it (its reply
    // overtaken on another connection) cannot tell whether the key is there.
    std::int64_t put_revision = 0;
    std::optional<SlotNews::Kind> told;
  };

  void grant_lease();
  void keep_alive();
  void put_claim(const std::string& fs_id);
  void poll_all();
  void read_backend(const std::string& backend);
  void judge(const std::string& backend, const std::vector<etcd::KeyValue>& kvs,
             std::int64_t revision);
  void delete_key(const std::string& key);
  void follow_with_watch(const std::string& backend);
  void tell(const std::string& fs_id, Claim& claim, SlotNews::Kind kind, std::string reason);
  void unreachable(const std::string& error);
  void heard_back() { last_reply_ = SteadyClock::now(); }

  FleetConfig config_;
  std::string host_;
  Listener listener_;
  std::unique_ptr<etcd::Client> client_;
  std::int64_t lease_ = 0;
  bool granting_ = false;
  // The last reply from etcd: a lease not renewed for a TTL may be gone.
  SteadyPoint last_reply_ = SteadyClock::now();
  Timer keepalive_timer_;
  Timer poll_timer_;
  std::map<std::string, Claim> claims_;           // by fs id
  std::map<std::string, std::uint64_t> watches_;  // backend -> the client's stream
  // Keys of released claims etcd did not delete (unreachable): deleted again
  // at every poll, or they would hold a slot as long as the lease lives.
  std::set<std::string> undeleted_;
  // Outlives the coordinator's callbacks: a reply after destruction is dropped.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace trimd::fleet
