#include "bus_logind.hpp"

#include <fcntl.h>

#include <sdbus-c++/Error.h>
#include <sdbus-c++/Message.h>
#include <sdbus-c++/Types.h>
#include <spdlog/spdlog.h>

namespace trimd::bus {

namespace {

constexpr const char* kLogindName = "org.freedesktop.login1";
constexpr const char* kLogindPath = "/org/freedesktop/login1";
constexpr const char* kLogindManager = "org.freedesktop.login1.Manager";
// logind answers at once; this bounds a wedged one.
constexpr std::uint64_t kInhibitTimeoutUsec = 10'000'000;

bool means_no_service(const std::string& error_name) {
  return error_name == "org.freedesktop.DBus.Error.ServiceUnknown" ||
         error_name == "org.freedesktop.DBus.Error.NameHasNoOwner";
}

// The lock's fd out of the reply; never inherited by a runner, which would
// hold the lock for as long as it lives.
Logind::Lock lock_from(sdbus::MethodReply& reply) {
  sdbus::UnixFd fd;
  reply >> fd;
  UniqueFd own(fd.release());
  if (own.get() < 0 || ::fcntl(own.get(), F_SETFD, FD_CLOEXEC) != 0)
    return Logind::Lock{UniqueFd{}, false, "logind's answer holds no usable file descriptor"};
  return Logind::Lock{std::move(own), false, {}};
}

}  // namespace

BusLogind::BusLogind(EventLoop& loop, BusConnection& connection)
    : connection_(connection),
      proxy_(sdbus::createProxy(connection.get(), kLogindName, kLogindPath)), later_(loop, [this] {
        if (auto answer = std::exchange(answer_later_, {})) answer();
      }) {
  proxy_->registerSignalHandler(kLogindManager, "PrepareForSleep", [this](sdbus::Signal& message) {
    signal(PowerDown::Sleep, message);
  });
  proxy_->registerSignalHandler(
      kLogindManager, "PrepareForShutdown",
      [this](sdbus::Signal& message) { signal(PowerDown::Shutdown, message); });
  proxy_->finishRegistration();
  connection_.dispatch_soon();  // what queued while AddMatch waited
}

BusLogind::~BusLogind() = default;

void BusLogind::signal(PowerDown what, sdbus::Signal& message) {
  bool coming = false;
  try {
    message >> coming;
  } catch (const sdbus::Error& e) {
    spdlog::warn("logind: a {} signal without its boolean: {}", to_string(what), e.what());
    return;
  }
  if (prepare_) prepare_(what, coming);
}

void BusLogind::inhibit(const std::string& why, std::function<void(Lock)> done) {
  try {
    auto call = proxy_->createMethodCall(kLogindManager, "Inhibit");
    call << std::string("sleep:shutdown") << std::string("trimd") << why << std::string("delay");
    proxy_->callMethod(
        call,
        [done](sdbus::MethodReply& reply, const sdbus::Error* error) {
          if (error) {
            done(Lock{UniqueFd{}, means_no_service(error->getName()),
                      error->getName() + ": " + error->getMessage()});
            return;
          }
          try {
            done(lock_from(reply));
          } catch (const sdbus::Error& e) {
            done(Lock{UniqueFd{}, false,
                      "logind's answer is not a file descriptor: " + std::string(e.what())});
          }
        },
        kInhibitTimeoutUsec);
    connection_.dispatch_soon();
  } catch (const sdbus::Error& e) {
    answer_later_ = [done, text = std::string(e.what())] { done(Lock{UniqueFd{}, false, text}); };
    later_.arm_in(Duration{1});
  }
}

}  // namespace trimd::bus
