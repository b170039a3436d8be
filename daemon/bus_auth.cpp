#include "bus_auth.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>

#include <sdbus-c++/Error.h>
#include <sdbus-c++/Types.h>

#include "bus_names.hpp"

namespace trimd::bus {

namespace {

constexpr const char* kPolkitName = "org.freedesktop.PolicyKit1";
constexpr const char* kPolkitPath = "/org/freedesktop/PolicyKit1/Authority";
constexpr const char* kPolkitInterface = "org.freedesktop.PolicyKit1.Authority";
constexpr std::uint32_t kAllowUserInteraction = 1;
// Long enough for an admin to type a password at the agent's prompt.
constexpr auto kPolkitTimeout = std::chrono::minutes{2};

using PolkitSubject = sdbus::Struct<std::string, std::map<std::string, sdbus::Variant>>;
using PolkitResult = sdbus::Struct<bool, bool, std::map<std::string, std::string>>;

PolkitSubject bus_name_subject(const std::string& sender) {
  return PolkitSubject{"system-bus-name", {{"name", sdbus::Variant{sender}}}};
}

// One check counted in PendingChecks until polkit answered or the call
// could not be made, whichever way the callback ends (it may also be
// dropped unanswered with the proxy).
class PendingSlot {
 public:
  PendingSlot(std::shared_ptr<PendingChecks> pending, uid_t uid)
      : pending_(std::move(pending)), uid_(uid) {}
  ~PendingSlot() { release(); }
  PendingSlot(const PendingSlot&) = delete;
  PendingSlot& operator=(const PendingSlot&) = delete;
  void release() {
    if (pending_) pending_->remove(uid_);
    pending_.reset();
  }

 private:
  std::shared_ptr<PendingChecks> pending_;
  uid_t uid_;
};

}  // namespace

std::string access_denied_message(const std::string& method, const std::string& why) {
  return method + " requires root (or polkit authorization " + kPolkitAction + "): " + why;
}

bool PendingChecks::try_add(uid_t uid) {
  std::size_t& mine = by_user_[uid];
  if (mine >= kMaxPendingPerUser || total_ >= kMaxPending) {
    if (mine == 0) by_user_.erase(uid);
    return false;
  }
  ++mine;
  ++total_;
  return true;
}

void PendingChecks::remove(uid_t uid) {
  const auto it = by_user_.find(uid);
  if (it == by_user_.end()) return;
  --total_;
  if (--it->second == 0) by_user_.erase(it);
}

std::string busy_message(const std::string& method, const std::string& why) {
  return method + " must wait: too many requests are waiting for polkit (" + why + ")";
}

Authorizer::Authorizer(sdbus::IConnection& connection)
    : polkit_(sdbus::createProxy(connection, kPolkitName, kPolkitPath)) {}

Authorizer::~Authorizer() = default;

void Authorizer::check(const sdbus::Message& call, Decided decided) {
  uid_t uid = 0;
  std::string sender;
  try {
    sender = call.getSender();
    // The bus vouches for the effective uid the caller connected with.
    uid = call.getCredsEuid();
  } catch (const sdbus::Error& e) {
    decided({Decision::Denied, "cannot read the caller's credentials: " + e.getMessage()});
    return;
  }
  if (uid == 0) {
    decided({Decision::Allowed, "root"});
    return;
  }
  if (!pending_->try_add(uid)) {
    decided({Decision::Busy, "at most " + std::to_string(kMaxPendingPerUser) + " per user and " +
                                 std::to_string(kMaxPending) + " in all may wait; uid " +
                                 std::to_string(uid)});
    return;
  }
  ask_polkit(sender, uid, std::move(decided));
}

void Authorizer::ask_polkit(const std::string& sender, uid_t uid, Decided decided) {
  const std::string who = "uid " + std::to_string(uid);
  auto slot = std::make_shared<PendingSlot>(pending_, uid);
  try {
    polkit_->callMethodAsync("CheckAuthorization")
        .onInterface(kPolkitInterface)
        .withTimeout(kPolkitTimeout)
        .withArguments(bus_name_subject(sender), std::string(kPolkitAction),
                       std::map<std::string, std::string>{}, kAllowUserInteraction, std::string{})
        .uponReplyInvoke(
            [decided, who, slot](const sdbus::Error* error, const PolkitResult& result) {
              slot->release();
              if (error) {
                spdlog::debug("polkit: {}", error->what());
                decided({Decision::Denied,
                         who + " and polkit cannot be asked (" + error->getName() + ")"});
              } else if (std::get<0>(result)) {
                decided({Decision::Allowed, who + " authorized by polkit"});
              } else {
                decided({Decision::Denied, who + " not authorized by polkit"});
              }
            });
  } catch (const sdbus::Error& e) {
    slot->release();
    decided({Decision::Denied, who + " and polkit cannot be asked (" + e.getMessage() + ")"});
  }
}

}  // namespace trimd::bus
