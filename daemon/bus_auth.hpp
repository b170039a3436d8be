// Who may change trimd's state over the bus: root, or whoever polkit
// authorizes for org.trimd.trimd1.manage. Reading is open to everyone and
// never comes here.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <sdbus-c++/IConnection.h>
#include <sdbus-c++/IProxy.h>
#include <sdbus-c++/Message.h>

namespace trimd::bus {

enum class Decision { Allowed, Denied, Busy };

struct Verdict {
  Decision decision = Decision::Denied;
  std::string why;  // for the AccessDenied or Busy message and the log
  bool allowed() const { return decision == Decision::Allowed; }
};

// While polkit decides (it may be prompting for a password for minutes),
// the call waits with everything it carries. At most this many wait at
// once for one user, and in all: more are refused as Busy at once, so a
// caller cannot pile up memory (org.trimd.trimd1(5) documents the numbers).
inline constexpr std::size_t kMaxPendingPerUser = 4;
inline constexpr std::size_t kMaxPending = 16;

// The count of checks waiting for polkit, per user and in all.
class PendingChecks {
 public:
  // Counts one more for `uid`, or returns false when a limit is reached.
  bool try_add(uid_t uid);
  void remove(uid_t uid);
  std::size_t total() const { return total_; }

 private:
  std::map<uid_t, std::size_t> by_user_;
  std::size_t total_ = 0;
};

// The AccessDenied text for a refused `method`.
std::string access_denied_message(const std::string& method, const std::string& why);
// The Busy text for `method` refused because too many checks wait.
std::string busy_message(const std::string& method, const std::string& why);

class Authorizer {
 public:
  using Decided = std::function<void(const Verdict&)>;

  explicit Authorizer(sdbus::IConnection& connection);
  ~Authorizer();
  Authorizer(const Authorizer&) = delete;
  Authorizer& operator=(const Authorizer&) = delete;

  // Decides whether the sender of `call` may change things. `decided` runs
  // on the loop thread exactly once: right away for root and for callers
  // whose credentials cannot be read, after polkit answered otherwise (the
  // loop goes on meanwhile: polkit may be asking for a password), or right
  // away as Busy when too many checks wait already (PendingChecks).
  void check(const sdbus::Message& call, Decided decided);

 private:
  void ask_polkit(const std::string& sender, uid_t uid, Decided decided);

  // Before polkit_: the proxy's pending calls end first, and they count here.
  std::shared_ptr<PendingChecks> pending_ = std::make_shared<PendingChecks>();
  std::unique_ptr<sdbus::IProxy> polkit_;
};

}  // namespace trimd::bus
