// Who may change trimd's state over the bus: root, or whoever polkit
// authorizes for org.trimd.trimd1.manage. Reading is open to everyone and
// never comes here.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include <sdbus-c++/IConnection.h>
#include <sdbus-c++/IProxy.h>
#include <sdbus-c++/Message.h>

namespace trimd::bus {

struct Verdict {
  bool allowed = false;
  std::string why;  // for the AccessDenied message and the log
};

// The AccessDenied text for a refused `method`.
std::string access_denied_message(const std::string& method, const std::string& why);

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
  // loop goes on meanwhile: polkit may be asking for a password).
  void check(const sdbus::Message& call, Decided decided);

 private:
  void ask_polkit(const std::string& sender, uid_t uid, Decided decided);

  std::unique_ptr<sdbus::IProxy> polkit_;
};

}  // namespace trimd::bus
