// Whether the machine runs on battery: UPower's OnBattery while
// org.freedesktop.UPower is on the bus, else /sys/class/power_supply
// (lib/system/power_supply.hpp), looked at again on every udev event of
// that class and every minute. The class is read once at the start either
// way, so that no pass starts on battery while UPower's answer is on its
// way. Tells the engine (Manager::set_on_battery) through `changed`.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "event_loop.hpp"
#include "power_supply.hpp"

namespace trimd {

class UdevWatcher;

// UPower (org.freedesktop.UPower) as far as trimd needs it: the real one on
// the bus (bus_upower.hpp), a fake in the unit tests.
class UPower {
 public:
  virtual ~UPower() = default;
  // OnBattery now; nothing when UPower is not on the bus or does not say.
  // `done` runs later, on the loop.
  virtual void read_on_battery(std::function<void(std::optional<bool>)> done) = 0;
  // OnBattery changed (PropertiesChanged).
  virtual void on_change(std::function<void(bool on_battery)> handler) = 0;
};

class PowerWatch {
 public:
  // The power_supply class is read again this often (udev may be missing).
  static constexpr Duration kRecheck = std::chrono::minutes{1};

  // `upower` may be null (no bus): `power_supply_dir` alone. `changed` is
  // called with every value learned: the class's at once, from here.
  PowerWatch(EventLoop& loop, UPower* upower, std::filesystem::path power_supply_dir,
             std::function<void(bool on_battery)> changed);
  ~PowerWatch();
  PowerWatch(const PowerWatch&) = delete;
  PowerWatch& operator=(const PowerWatch&) = delete;

  enum class Source { Unknown, UPower, PowerSupply };
  Source source() const { return source_; }

 private:
  void from_upower(bool on_battery);
  void watch_power_supply();
  void read_power_supply();

  EventLoop& loop_;
  std::filesystem::path dir_;
  std::function<void(bool)> changed_;
  Source source_ = Source::Unknown;
  Timer recheck_;
  std::unique_ptr<UdevWatcher> udev_;
};

}  // namespace trimd
