#include "power_watch.hpp"

#include <spdlog/spdlog.h>

#include "watchers.hpp"

namespace trimd {

PowerWatch::PowerWatch(EventLoop& loop, UPower* upower, std::filesystem::path power_supply_dir,
                       std::function<void(bool)> changed)
    : loop_(loop), dir_(std::move(power_supply_dir)), changed_(std::move(changed)),
      recheck_(loop, [this] { read_power_supply(); }) {
  // At once, before the first pass can start: UPower reads the same class,
  // so its answer a moment later agrees on a real machine.
  changed_(read_power_source(dir_) == PowerSource::Battery);
  if (!upower) {
    watch_power_supply();
    return;
  }
  // UPower that shows up later (its first signal) takes over from sysfs.
  upower->on_change([this](bool on_battery) { from_upower(on_battery); });
  upower->read_on_battery([this](std::optional<bool> on_battery) {
    if (on_battery) {
      from_upower(*on_battery);
    } else if (source_ == Source::Unknown) {
      watch_power_supply();
      read_power_supply();
    }
  });
}

PowerWatch::~PowerWatch() = default;

void PowerWatch::from_upower(bool on_battery) {
  if (source_ != Source::UPower) {
    spdlog::debug("power: UPower's OnBattery says whether the machine runs on battery");
    source_ = Source::UPower;
    udev_.reset();
    recheck_.disarm();
  }
  changed_(on_battery);
}

void PowerWatch::watch_power_supply() {
  spdlog::debug("power: no UPower; {} says whether the machine runs on battery", dir_.string());
  source_ = Source::PowerSupply;
  udev_ = std::make_unique<UdevWatcher>(
      loop_, [this] { read_power_supply(); }, "power_supply");
  recheck_.arm_every(kRecheck);
}

void PowerWatch::read_power_supply() {
  if (source_ != Source::PowerSupply) return;
  changed_(read_power_source(dir_) == PowerSource::Battery);
}

}  // namespace trimd
