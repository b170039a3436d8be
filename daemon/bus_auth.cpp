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

}  // namespace

std::string access_denied_message(const std::string& method, const std::string& why) {
  return method + " requires root (or polkit authorization " + kPolkitAction + "): " + why;
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
    decided({false, "cannot read the caller's credentials: " + e.getMessage()});
    return;
  }
  if (uid == 0) {
    decided({true, "root"});
    return;
  }
  ask_polkit(sender, uid, std::move(decided));
}

void Authorizer::ask_polkit(const std::string& sender, uid_t uid, Decided decided) {
  const std::string who = "uid " + std::to_string(uid);
  try {
    polkit_->callMethodAsync("CheckAuthorization")
        .onInterface(kPolkitInterface)
        .withTimeout(kPolkitTimeout)
        .withArguments(bus_name_subject(sender), std::string(kPolkitAction),
                       std::map<std::string, std::string>{}, kAllowUserInteraction,
                       std::string{})
        .uponReplyInvoke([decided, who](const sdbus::Error* error, const PolkitResult& result) {
          if (error) {
            spdlog::debug("polkit: {}", error->what());
            decided({false, who + " and polkit cannot be asked (" + error->getName() + ")"});
          } else if (std::get<0>(result)) {
            decided({true, who + " authorized by polkit"});
          } else {
            decided({false, who + " not authorized by polkit"});
          }
        });
  } catch (const sdbus::Error& e) {
    decided({false, who + " and polkit cannot be asked (" + e.getMessage() + ")"});
  }
}

}  // namespace trimd::bus
