// The daemon and the machine it runs on: logind's sleep and shutdown
// (sleep_watch.hpp) and the battery (power_watch.hpp), each told to the
// engine, with "now" passed in.
#include <sdbus-c++/Error.h>
#include <spdlog/spdlog.h>

#include "bus_logind.hpp"
#include "bus_service.hpp"
#include "bus_upower.hpp"
#include "daemon.hpp"
#include "power_watch.hpp"

namespace trimd {

namespace {

constexpr const char* kPowerSupplyDir = "/sys/class/power_supply";

}  // namespace

void Daemon::watch_machine() {
  if (bus_) {
    try {
      logind_ = std::make_unique<bus::BusLogind>(loop_, bus_->connection());
      sleep_ = std::make_unique<SleepWatch>(loop_, *logind_, static_cast<SleepClient&>(*this));
    } catch (const sdbus::Error& e) {
      spdlog::warn("cannot watch logind for sleep and shutdown: {}", e.what());
    }
    try {
      upower_ = std::make_unique<bus::BusUPower>(loop_, bus_->connection());
    } catch (const sdbus::Error& e) {
      spdlog::warn("cannot watch UPower: {}; reading {} instead", e.what(), kPowerSupplyDir);
    }
  }
  power_ =
      std::make_unique<PowerWatch>(loop_, upower_.get(), kPowerSupplyDir, [this](bool on_battery) {
        manager_->set_on_battery(on_battery, now());
        kick();
      });
}

// Before the bus connection goes: both clients live on it.
void Daemon::unwatch_machine() {
  power_.reset();
  upower_.reset();
  logind_.reset();
  sleep_.reset();
}

bool Daemon::lock_wanted(TimePoint now) const {
  return runner_->in_kernel() > 0 || manager_->chunks_may_start(now);
}

std::size_t Daemon::stop_chunks(TimePoint now) {
  const std::size_t running = runner_->in_kernel();
  manager_->sleep_coming(now);
  stop_requested_chunks();
  return running;
}

std::size_t Daemon::runners_left() const { return runner_->in_kernel(); }

void Daemon::resume(TimePoint now) {
  manager_->woke(now);
  kick();
}

}  // namespace trimd
