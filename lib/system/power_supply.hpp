// Whether the machine runs on battery, from /sys/class/power_supply (the
// kernel's view; UPower's OnBattery is preferred when it is on the bus:
// daemon/power_watch.hpp). Takes the directory, so tests pass a fixture.
#pragma once

#include <filesystem>

namespace trimd {

enum class PowerSource {
  Ac,         // a mains or USB supply is online, or no battery is discharging
  Battery,    // no supply online and a system battery discharging
  NoBattery,  // no system battery at all: never "on battery"
};
const char* to_string(PowerSource source);  // "ac", "battery", "no-battery"

// At most this many supplies are looked at (a laptop has two or three).
inline constexpr int kMaxPowerSupplies = 64;

// Reads `dir` (/sys/class/power_supply): a supply of type Mains or USB
// whose `online` is 1 means AC; else a battery (type Battery, scope not
// Device: a mouse's battery does not count, `present` not 0) whose `status`
// is Discharging means battery. A directory that cannot be read has no
// battery.
PowerSource read_power_source(const std::filesystem::path& dir);

}  // namespace trimd
