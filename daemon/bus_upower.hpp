// UPower on the bus trimd already talks on (org.freedesktop.UPower): its
// OnBattery property and the changes of it, behind the narrow UPower
// interface of power_watch.hpp.
#pragma once

#include <memory>

#include <sdbus-c++/IProxy.h>

#include "bus_connection.hpp"
#include "power_watch.hpp"

namespace trimd::bus {

class BusUPower final : public UPower {
 public:
  // Subscribes to PropertiesChanged (a blocking AddMatch: start-up only).
  // Throws sdbus::Error when the connection cannot.
  BusUPower(EventLoop& loop, BusConnection& connection);
  ~BusUPower() override;

  void read_on_battery(std::function<void(std::optional<bool>)> done) override;
  void on_change(std::function<void(bool)> handler) override { changed_ = std::move(handler); }

 private:
  void properties_changed(sdbus::Signal& message);

  BusConnection& connection_;
  std::unique_ptr<sdbus::IProxy> proxy_;
  std::function<void(bool)> changed_;
  Timer later_;
  std::function<void()> answer_later_;
};

}  // namespace trimd::bus
