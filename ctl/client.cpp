#include "client.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <sdbus-c++/sdbus-c++.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>

#include "trimd1_proxy.h"

namespace trimctl {

namespace {

constexpr const char* kBusName = "org.trimd.trimd1";

using VariantMap = std::map<std::string, sdbus::Variant>;
using InterfaceMap = std::map<std::string, VariantMap>;

std::optional<PropertyValue> to_property_value(const sdbus::Variant& variant) {
  const std::string type = variant.peekValueType();
  if (type == "b") return variant.get<bool>();
  if (type == "t") return variant.get<uint64_t>();
  if (type == "u") return static_cast<uint64_t>(variant.get<uint32_t>());
  if (type == "d") return variant.get<double>();
  if (type == "s") return variant.get<std::string>();
  if (type == "o") return std::string(variant.get<sdbus::ObjectPath>());
  if (type == "as") return variant.get<std::vector<std::string>>();
  return std::nullopt;  // a type this trimctl does not know yet
}

PropertyMap to_property_map(const VariantMap& variants) {
  PropertyMap properties;
  for (const auto& [name, variant] : variants)
    if (auto value = to_property_value(variant)) properties.emplace(name, std::move(*value));
  return properties;
}

FilesystemInfo to_filesystem(const std::string& path, const VariantMap& variants) {
  FilesystemInfo filesystem;
  filesystem.object_path = path;
  apply_properties(filesystem, to_property_map(variants));
  return filesystem;
}

// Errors that mean "trimd is not there", as opposed to trimd saying no.
bool means_unreachable(const std::string& name) {
  static constexpr std::array<const char*, 11> kNames{"org.freedesktop.DBus.Error.ServiceUnknown",
                                                      "org.freedesktop.DBus.Error.NameHasNoOwner",
                                                      "org.freedesktop.DBus.Error.NoServer",
                                                      "org.freedesktop.DBus.Error.Disconnected",
                                                      "org.freedesktop.DBus.Error.NoReply",
                                                      "org.freedesktop.DBus.Error.Timeout",
                                                      "org.freedesktop.DBus.Error.TimedOut",
                                                      "System.Error.ENOTCONN",
                                                      "System.Error.ECONNRESET",
                                                      "System.Error.EPIPE",
                                                      "System.Error.ECONNREFUSED"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

// Runs one call into sdbus-c++ and turns its exceptions into ours.
template <typename Call>
auto translated(const std::string& unreachable_message, Call&& call) -> decltype(call()) {
  try {
    return call();
  } catch (const sdbus::Error& error) {
    if (means_unreachable(error.getName())) throw Unreachable(unreachable_message);
    throw BusError(error.getName(), error.getMessage());
  }
}

// sd-bus takes the system bus's address from $DBUS_SYSTEM_BUS_ADDRESS, so
// pointing that at `address` opens it as the bus trimd is on. (Not with
// createSessionBusConnectionWithAddress: in sdbus-c++ 1.2.0 it leaks its
// sd_bus when the connect fails, which fails sanitizer builds.)
std::unique_ptr<sdbus::IConnection> connect_to(const std::string& address) {
  if (!address.empty()) setenv("DBUS_SYSTEM_BUS_ADDRESS", address.c_str(), 1);
  return sdbus::createSystemBusConnection();
}

// SIGINT/SIGTERM as a readable fd, so waiting can end cleanly in poll().
class TerminationSignals {
 public:
  TerminationSignals() {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    fd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd_ < 0) throw std::runtime_error(std::string("signalfd: ") + std::strerror(errno));
  }
  ~TerminationSignals() { close(fd_); }
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// Where the signals end up: the subscribed sink, if any.
struct Router {
  EventSink* sink = nullptr;
};

class ManagerProxy final
    : public sdbus::ProxyInterfaces<org::trimd::trimd1::Manager_proxy, sdbus::ObjectManager_proxy> {
 public:
  ManagerProxy(sdbus::IConnection& connection, Router& router)
      : ProxyInterfaces(connection, kBusName, kManagerPath), router_(router) {}
  ~ManagerProxy() { unregisterProxy(); }

  // The match rules cost a round trip each: only commands that listen ask.
  void listen() { registerProxy(); }

  // Every property of the Manager interface, in one round trip.
  VariantMap properties() {
    VariantMap values;
    getProxy()
        .callMethod("GetAll")
        .onInterface("org.freedesktop.DBus.Properties")
        .withArguments(std::string(kManagerInterface))
        .storeResultsTo(values);
    return values;
  }

 private:
  void onTrimStarted(const sdbus::ObjectPath& filesystem) override {
    if (router_.sink) router_.sink->on_trim_started(filesystem);
  }
  void onTrimFinished(const sdbus::ObjectPath& filesystem, const std::string& result,
                      const uint64_t& bytes, const uint64_t& usec) override {
    if (router_.sink) router_.sink->on_trim_finished(filesystem, result, bytes, usec);
  }
  void onInterfacesAdded(const sdbus::ObjectPath& path, const InterfaceMap& interfaces) override {
    const auto it = interfaces.find(kFilesystemInterface);
    if (it != interfaces.end() && router_.sink)
      router_.sink->on_filesystem_added(to_filesystem(path, it->second));
  }
  void onInterfacesRemoved(const sdbus::ObjectPath& path,
                           const std::vector<std::string>& interfaces) override {
    const bool filesystem_gone =
        std::find(interfaces.begin(), interfaces.end(), kFilesystemInterface) != interfaces.end();
    if (filesystem_gone && router_.sink) router_.sink->on_filesystem_removed(path);
  }

  Router& router_;
};

// A PropertiesChanged may name properties without their values.
void fetch_invalidated(sdbus::IConnection& connection, const std::string& path,
                       const std::string& interface, const std::vector<std::string>& names,
                       PropertyMap& into) {
  if (names.empty()) return;
  auto proxy = sdbus::createProxy(connection, kBusName, path);
  for (const auto& name : names) {
    try {
      const sdbus::Variant value = proxy->getProperty(name).onInterface(interface);
      if (auto converted = to_property_value(value)) into[name] = std::move(*converted);
    } catch (const sdbus::Error&) {
      // Gone again already: its next change will tell.
    }
  }
}

}  // namespace

struct Client::Impl {
  std::string unreachable_message;
  std::unique_ptr<sdbus::IConnection> connection;
  Router router;
  // Declared after the connection: proxies and matches go before it does.
  std::unique_ptr<ManagerProxy> manager;
  std::optional<sdbus::Slot> owner_watch;
  std::optional<sdbus::Slot> properties_watch;
  std::optional<TerminationSignals> termination;

  template <typename Call>
  auto call(Call&& c) -> decltype(c()) {
    return translated(unreachable_message, std::forward<Call>(c));
  }

  sdbus::Slot add_match(const std::string& rule, sdbus::message_handler handler) {
    return call([&] { return connection->addMatch(rule, std::move(handler)); });
  }

  void watch_daemon_presence() {
    owner_watch = add_match(
        std::string("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                    "member='NameOwnerChanged',arg0='") +
            kBusName + "'",
        [this](sdbus::Message& message) {
          std::string name, old_owner, new_owner;
          message >> name >> old_owner >> new_owner;
          if (router.sink) router.sink->on_daemon_presence(!new_owner.empty());
        });
  }

  // One rule for the manager and every filesystem, those to come included:
  // no window in which a new object's changes go unheard.
  void watch_properties() {
    properties_watch = add_match(
        std::string("type='signal',sender='") + kBusName +
            "',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
            "path_namespace='" +
            kManagerPath + "'",
        [this](sdbus::Message& message) {
          if (!router.sink) return;
          std::string interface;
          VariantMap changed;
          std::vector<std::string> invalidated;
          message >> interface >> changed >> invalidated;
          PropertyMap properties = to_property_map(changed);
          fetch_invalidated(*connection, message.getPath(), interface, invalidated, properties);
          router.sink->on_properties_changed(message.getPath(), interface, properties);
        });
  }
};

Client::Client(const std::string& address) : impl_(std::make_unique<Impl>()) {
  impl_->unreachable_message =
      address.empty() ? "cannot reach trimd on the system bus (is trimd.service running?)"
                      : "cannot reach trimd at " + address + " (is trimd running on that bus?)";
  try {
    impl_->connection = connect_to(address);
    impl_->manager = std::make_unique<ManagerProxy>(*impl_->connection, impl_->router);
  } catch (const sdbus::Error&) {
    throw Unreachable(impl_->unreachable_message);
  }
}

Client::~Client() = default;

void Client::allow_time_to_authenticate() {
  // trimd gives polkit two minutes; a little more, so its answer gets here.
  impl_->connection->setMethodCallTimeout(std::chrono::seconds(150));
}

ManagerInfo Client::manager() {
  ManagerInfo info;
  apply_properties(info,
                   to_property_map(impl_->call([&] { return impl_->manager->properties(); })));
  return info;
}

std::vector<FilesystemInfo> Client::filesystems() {
  std::vector<FilesystemInfo> result;
  const auto objects = impl_->call([&] { return impl_->manager->GetManagedObjects(); });
  for (const auto& [path, interfaces] : objects) {
    const auto it = interfaces.find(kFilesystemInterface);
    if (it != interfaces.end()) result.push_back(to_filesystem(path, it->second));
  }
  std::sort(result.begin(), result.end(),
            [](const auto& a, const auto& b) { return a.mount_point < b.mount_point; });
  return result;
}

void Client::trim_now(const std::vector<std::string>& mount_points, bool ignore_idle) {
  impl_->call([&] { impl_->manager->TrimNow(mount_points, ignore_idle); });
}

void Client::pause(const std::vector<std::string>& mount_points) {
  impl_->call([&] { impl_->manager->Pause(mount_points); });
}

void Client::resume(const std::vector<std::string>& mount_points) {
  impl_->call([&] { impl_->manager->Resume(mount_points); });
}

void Client::cancel(const std::vector<std::string>& mount_points) {
  impl_->call([&] { impl_->manager->Cancel(mount_points); });
}

void Client::reload() {
  impl_->call([&] { impl_->manager->Reload(); });
}

void Client::notify_freed(const std::string& mount_point, uint64_t bytes) {
  impl_->call([&] { impl_->manager->NotifyFreed(mount_point, bytes); });
}

void Client::take_over(const std::vector<std::string>& mount_points) {
  impl_->call([&] { impl_->manager->TakeOver(mount_points); });
}

void Client::hand_back(const std::vector<std::string>& mount_points) {
  impl_->call([&] { impl_->manager->HandBack(mount_points); });
}

std::vector<PassInfo> Client::history(const std::string& mount_point) {
  const auto entries = impl_->call([&] { return impl_->manager->GetHistory(mount_point); });
  std::vector<PassInfo> out;
  for (const auto& e : entries)
    out.push_back(PassInfo{e.get<0>(), e.get<1>(), e.get<2>(), e.get<3>(), e.get<4>(), e.get<5>(),
                           e.get<6>(), e.get<7>()});
  return out;
}

FleetView Client::fleet() {
  const auto [backends, claims] = impl_->call([&] { return impl_->manager->GetFleetView(); });
  FleetView view;
  for (const auto& b : backends)
    view.backends.push_back(FleetBackend{b.get<0>(), b.get<1>(), b.get<2>(), b.get<3>(), b.get<4>(),
                                         b.get<5>(), b.get<6>(), b.get<7>()});
  for (const auto& e : claims)
    view.claims.push_back(FleetClaim{e.get<0>(), e.get<1>(), e.get<2>(), e.get<3>(), e.get<4>(),
                                     e.get<5>(), e.get<6>(), e.get<7>()});
  return view;
}

void Client::subscribe(EventSink& sink) {
  impl_->termination.emplace();
  impl_->router.sink = &sink;
  impl_->watch_daemon_presence();
  impl_->watch_properties();
  impl_->call([&] { impl_->manager->listen(); });
}

bool Client::dispatch_until(const std::function<bool()>& done) {
  if (!impl_->termination) impl_->termination.emplace();
  auto& connection = *impl_->connection;
  try {
    while (!done()) {
      if (connection.processPendingRequest()) continue;
      const auto poll_data = connection.getEventLoopPollData();
      std::array<pollfd, 2> fds{
          {{poll_data.fd, poll_data.events, 0}, {impl_->termination->fd(), POLLIN, 0}}};
      if (poll(fds.data(), fds.size(), poll_data.getPollTimeout()) < 0 && errno != EINTR)
        throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      if (fds[1].revents & POLLIN) return false;
    }
  } catch (const sdbus::Error&) {
    // sd-bus fails processing only when the connection is gone.
    throw Unreachable("lost the connection to the bus; run the command again once it is back");
  }
  return true;
}

}  // namespace trimctl
