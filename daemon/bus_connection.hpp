// One sd-bus connection driven by the daemon's epoll loop: no threads of its
// own (never enterEventLoopAsync), every callback on the loop thread.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <sdbus-c++/IConnection.h>

#include "event_loop.hpp"

namespace trimd::bus {

class BusConnection {
 public:
  // `address` empty: the system bus ($DBUS_SYSTEM_BUS_ADDRESS or the
  // default socket). Throws sdbus::Error when the bus cannot be reached.
  BusConnection(EventLoop& loop, const std::optional<std::string>& address);
  ~BusConnection();
  BusConnection(const BusConnection&) = delete;
  BusConnection& operator=(const BusConnection&) = delete;

  sdbus::IConnection& get() { return *connection_; }
  bool connected() const { return !lost_; }

  // Messages were queued outside a bus callback (signals emitted from a
  // worker's report, say): process them on the next turn of the loop, when
  // no sd-bus callback is on the stack.
  void dispatch_soon();

  // The bus's answer to RequestName (DO_NOT_QUEUE): the reply code itself,
  // not an error's text. Blocks; for start-up only.
  enum class NameRequest { PrimaryOwner, InQueue, Exists, AlreadyOwner };
  NameRequest request_name(const std::string& name);

 private:
  void dispatch();
  void watch_poll_data();
  void on_lost(const std::exception& error);

  EventLoop& loop_;
  std::unique_ptr<sdbus::IConnection> connection_;
  int fd_ = -1;
  std::uint32_t watched_events_ = 0;
  Timer timer_;
  bool lost_ = false;
};

}  // namespace trimd::bus
