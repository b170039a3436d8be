// logind on the bus trimd already talks on (org.freedesktop.login1): the
// delay lock and the PrepareForSleep / PrepareForShutdown signals, behind
// the narrow Logind interface of sleep_watch.hpp.
#pragma once

#include <memory>
#include <optional>

#include <sdbus-c++/IProxy.h>

#include "bus_connection.hpp"
#include "sleep_watch.hpp"

namespace trimd::bus {

class BusLogind final : public Logind {
 public:
  // Subscribes to the signals (a blocking AddMatch: for start-up only).
  // Throws sdbus::Error when the connection cannot.
  BusLogind(EventLoop& loop, BusConnection& connection);
  ~BusLogind() override;

  void inhibit(const std::string& why, std::function<void(Lock)> done) override;
  void on_prepare(Prepare handler) override { prepare_ = std::move(handler); }

 private:
  void signal(PowerDown what, sdbus::Signal& message);

  BusConnection& connection_;
  std::unique_ptr<sdbus::IProxy> proxy_;
  Prepare prepare_;
  // An Inhibit that could not even be sent is answered on the next turn.
  Timer later_;
  std::function<void()> answer_later_;
};

}  // namespace trimd::bus
