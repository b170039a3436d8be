// The duty budget, the engine's side (docs/duty.md):
// after each chunk the device time it cost earns a pause, on each of its
// disks, before any chunk there starts again; a fleet slot is kept through
// its holder's pause (docs/fleet.md).
#include <algorithm>

#include "manager.hpp"
#include "manager_tracked.hpp"

namespace trimd {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

}  // namespace

DutyBudget Manager::budget_of(const Tracked& fs) const {
  const bool coordinated = slot_required(fs);
  return duty_budget(fs.policy.duty, joined(fs.fs.disk_names()),
                     coordinated ? config_.fleet->duty : 0,
                     coordinated ? config_.fleet->max_concurrent : 1, fs.policy.backend);
}

// A chunk came back having kept its disks busy for `device_time`.
void Manager::pace(Tracked& fs, const std::vector<std::string>& disks, Duration device_time,
                   TimePoint now, SteadyPoint mono) {
  fs.discard_busy += device_time;
  const DutyBudget budget = budget_of(fs);
  const Duration pause = duty_pause(device_time, budget.share);
  if (pause <= Duration{0}) return;
  const DutyPause paused{mono + pause, now + pause, budget};
  for (const auto& disk : disks) {
    auto [it, fresh] = paced_disks_.try_emplace(disk, paused);
    if (!fresh && it->second.until < paused.until) it->second = paused;
  }
  // The slot's part of the fleet's budget must be paid before the slot
  // passes on; a stricter [trim] duty only holds this host's disks longer.
  if (fs.slot.standing == FleetSlot::Standing::Held && slot_required(fs) &&
      config_.fleet->duty > 0) {
    const DutyBudget fleet =
        duty_budget(0, {}, config_.fleet->duty, config_.fleet->max_concurrent, fs.slot.backend);
    const Duration slot_pause = duty_pause(device_time, fleet.share);
    fs.slot.pacing = DutyPause{mono + slot_pause, now + slot_pause, fleet};
  }
}

// The pause that holds `fs`'s next chunk, if any: the latest on its disks.
const DutyPause* Manager::pause_of(const Tracked& fs, SteadyPoint mono) const {
  const DutyPause* latest = nullptr;
  for (const auto& disk : fs.fs.disk_names()) {
    const auto it = paced_disks_.find(disk);
    if (it == paced_disks_.end() || it->second.until <= mono) continue;
    if (!latest || latest->until < it->second.until) latest = &it->second;
  }
  return latest;
}

// Whether the budget holds `fs`'s next chunk now; sets fs.wait when it does.
bool Manager::paced(Tracked& fs, TimePoint now, SteadyPoint mono) {
  const DutyPause* pause = pause_of(fs, mono);
  if (!pause) return false;
  fs.pacing = *pause;
  set_wait(fs, Wait{WaitingFor::Pacing, {}, {}}, now);
  return true;
}

// Pacing is part of trimming: the state stays what it is (trimming, or
// waiting for a pass not begun), WaitingFor and StateReason say why the
// next chunk has not started, and when it will.
void Manager::pacing_status(const Tracked& fs, FsStatus& status, TimePoint now) const {
  if (fs.in_flight || fs.paused || !fs.trimmable()) return;
  if (fs.wait.reason == WaitingFor::Pacing && (fs.pass || fs.request)) {
    status.waiting_for = WaitingFor::Pacing;
    status.state_reason = pacing_text(
        fs.pacing.budget, std::chrono::duration_cast<Duration>(fs.pacing.wall_until - now));
  } else if (!fs.pass && fs.slot.pacing && fs.slot.standing == FleetSlot::Standing::Held) {
    status.waiting_for = WaitingFor::Pacing;
    status.state_reason = pacing_text(
        fs.slot.pacing->budget,
        std::chrono::duration_cast<Duration>(fs.slot.pacing->wall_until - now), "slot handed on");
  }
}

}  // namespace trimd
