#include "bus_connection.hpp"

#include <poll.h>
#include <sys/epoll.h>

#include <spdlog/spdlog.h>

#include <sdbus-c++/Error.h>
#include <sdbus-c++/IProxy.h>

#include <stdexcept>

namespace trimd::bus {

namespace {

// Bound one round, so a flood of calls cannot starve the rest of the loop.
constexpr int kMaxMessagesPerRound = 256;
// No sd-bus timeout pending: the timer is still armed, just far away.
constexpr Duration kIdleRecheck = std::chrono::hours{1};

std::unique_ptr<sdbus::IConnection> open_bus(const std::optional<std::string>& address) {
  if (!address) return sdbus::createSystemBusConnection();
  // Despite its name this is sd_bus_new + set_address + set_bus_client +
  // start: a bus client on any address, which is what --bus-address means.
  return sdbus::createSessionBusConnectionWithAddress(*address);
}

std::uint32_t epoll_events_for(short poll_events) {
  std::uint32_t events = 0;
  if (poll_events & POLLIN) events |= EPOLLIN;
  if (poll_events & POLLOUT) events |= EPOLLOUT;
  return events;
}

}  // namespace

BusConnection::BusConnection(EventLoop& loop, const std::optional<std::string>& address)
    : loop_(loop), connection_(open_bus(address)), timer_(loop, [this] { dispatch(); }) {
  const auto poll = connection_->getEventLoopPollData();
  fd_ = poll.fd;
  watched_events_ = epoll_events_for(poll.events) | EPOLLIN;
  loop_.add(fd_, watched_events_, [this](std::uint32_t) { dispatch(); });
  dispatch_soon();
}

BusConnection::~BusConnection() {
  if (!lost_) loop_.remove(fd_);
}

BusConnection::NameRequest BusConnection::request_name(const std::string& name) {
  // The reply codes and flag of the D-Bus specification's RequestName.
  constexpr std::uint32_t kDoNotQueue = 4;
  auto bus = sdbus::createProxy(*connection_, "org.freedesktop.DBus", "/org/freedesktop/DBus");
  std::uint32_t reply = 0;
  bus->callMethod("RequestName")
      .onInterface("org.freedesktop.DBus")
      .withArguments(name, kDoNotQueue)
      .storeResultsTo(reply);
  switch (reply) {
    case 1: return NameRequest::PrimaryOwner;
    case 2: return NameRequest::InQueue;
    case 3: return NameRequest::Exists;
    case 4: return NameRequest::AlreadyOwner;
  }
  throw std::runtime_error("RequestName(" + name + ") answered " + std::to_string(reply));
}

void BusConnection::dispatch_soon() {
  if (!lost_) timer_.arm_in(Duration{1});
}

void BusConnection::dispatch() {
  if (lost_) return;
  try {
    for (int i = 0; i < kMaxMessagesPerRound; ++i) {
      if (!connection_->processPendingRequest()) {
        watch_poll_data();
        return;
      }
    }
    dispatch_soon();  // more to do: after the loop's other sources had a turn
  } catch (const sdbus::Error& e) {
    on_lost(e);
  }
}

// What sd-bus wants next: POLLOUT while output is queued, and a deadline
// for method call timeouts and authentication.
void BusConnection::watch_poll_data() {
  const auto poll = connection_->getEventLoopPollData();
  const std::uint32_t events = epoll_events_for(poll.events) | EPOLLIN;
  if (events != watched_events_) {
    loop_.modify(fd_, events);
    watched_events_ = events;
  }
  const auto timeout = poll.getRelativeTimeout();
  timer_.arm_in(timeout ? std::chrono::duration_cast<Duration>(*timeout) : kIdleRecheck);
}

void BusConnection::on_lost(const std::exception& error) {
  spdlog::error("lost the D-Bus connection ({}); trimd goes on trimming without it", error.what());
  lost_ = true;
  loop_.remove(fd_);
}

}  // namespace trimd::bus
