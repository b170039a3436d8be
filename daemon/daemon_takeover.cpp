// The daemon's part in taking over inline discard: run the decisions after
// every rescan, serve TakeOver and HandBack, and rescan after a remount
// (a reconfigure does not always wake mountinfo's pollers).
#include <spdlog/spdlog.h>

#include "daemon.hpp"
#include "mountinfo.hpp"
#include "unit_job.hpp"

namespace trimd {

namespace {

// udev events come in bursts; rescan once after the burst (as daemon.cpp).
constexpr Duration kRescanAfterRemount = std::chrono::milliseconds{200};
// How long a stop waits for systemd to say whether it is a restart.
constexpr std::chrono::milliseconds kAskSystemd{1000};

std::vector<FstabEntry> read_fstab() {
  return parse_fstab(read_text_file("/etc/fstab").value_or(""));
}

}  // namespace

void DaemonControl::take_over(const std::vector<std::string>&) {
  throw ManagerError(ManagerError::Kind::NotSupported, "this trimd cannot take filesystems over");
}

void DaemonControl::hand_back(const std::vector<std::string>&) {
  throw ManagerError(ManagerError::Kind::NotSupported, "this trimd cannot take filesystems over");
}

void Daemon::reconcile_takeovers(const std::vector<DiscoveredFs>& found) {
  // --once is a drop-in for fstrim.service: it remounts nothing.
  if (options_.once || stopping_) return;
  if (!takeover_->reconcile(found, read_fstab(), now())) return;
  save_state(true);  // what trimd owes back must survive a crash right after
  rescan_timer_->arm_in(kRescanAfterRemount);
}

void Daemon::hand_back_on_stop() {
  const bool restarting =
      takeover_->owes_discard() && stop_is_a_restart(own_unit_job_type(kAskSystemd));
  takeover_->stop(now(), restarting);
}

void Daemon::take_over(const std::vector<std::string>& ids) {
  takeover_->take_over(ids, now());
  save_state(true);
  rescan_timer_->arm_in(kRescanAfterRemount);
}

void Daemon::hand_back(const std::vector<std::string>& ids) {
  takeover_->hand_back(ids, now());
  save_state(true);
  rescan_timer_->arm_in(kRescanAfterRemount);
}

}  // namespace trimd
