// What the machine does to the passes: running on battery, and sleeping
// (the daemon hears of both: daemon/power_watch.*, daemon/sleep_watch.*).
#include <spdlog/spdlog.h>

#include "manager.hpp"
#include "manager_tracked.hpp"

namespace trimd {

void Manager::set_on_battery(bool on_battery, TimePoint now) {
  if (on_battery == on_battery_) return;
  on_battery_ = on_battery;
  spdlog::info(on_battery ? "the machine runs on battery: passes follow on_battery"
                          : "the machine runs on AC power again");
  for (auto& [id, fs] : filesystems_) notify(*fs, now);
  notify_manager();
}

void Manager::sleep_coming(TimePoint /*now*/) { asleep_ = true; }

void Manager::woke(TimePoint now) {
  asleep_ = false;
  std::vector<std::string> disks;
  for (const auto& [id, fs] : filesystems_) {
    const auto names = fs->fs.disk_names();
    disks.insert(disks.end(), names.begin(), names.end());
  }
  idleness_.mark_busy(disks, now);
}

bool Manager::chunks_may_start(TimePoint now) const {
  if (stopping_ || asleep_) return false;
  for (const auto& [id, fs] : filesystems_) {
    if (fs->in_flight) return true;
    if (!fs->trimmable() || fs->paused || !wants_to_run(*fs, now)) continue;
    const WaitingFor reason = fs->wait.reason;
    if (reason != WaitingFor::OutsideWindow && reason != WaitingFor::OnBattery &&
        reason != WaitingFor::Paused)
      return true;
  }
  return false;
}

}  // namespace trimd
