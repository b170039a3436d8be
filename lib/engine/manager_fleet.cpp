// The fleet-wide cap on passes per shared backend, the engine's side
// (docs/fleet.md): a pass on a coordinated filesystem asks for a slot when
// it would trim its next chunk, trims only while it holds one, and gives it
// back when the pass ends or is held up for longer than one lease TTL.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "log_event.hpp"
#include "manager.hpp"
#include "manager_tracked.hpp"

namespace trimd {

namespace {

using Standing = FleetSlot::Standing;

std::string asking_text(const std::string& backend) {
  return backend + ": asking the fleet for a slot";
}

std::string unreachable_text(const FleetSlot& slot) {
  return slot.backend + ": etcd unreachable (" + slot.detail + ")";
}

}  // namespace

bool Manager::slot_required(const Tracked& fs) const {
  return fleet_gate_ && config_.fleet && !fs.policy.backend.empty();
}

// Whether the fleet lets `fs` trim its next chunk; sets fs.wait when not.
// Called only when the chunk could otherwise start: a slot is asked for
// when it would be used, never while the disks are busy or the window shut.
bool Manager::slot_allows(Tracked& fs, TimePoint now) {
  if (!slot_required(fs)) return true;
  FleetSlot& slot = fs.slot;
  switch (slot.standing) {
    case Standing::Held:
    case Standing::Local: return true;
    case Standing::None:
      slot = FleetSlot{};
      slot.standing = Standing::Asked;
      slot.backend = fs.policy.backend;
      slot.asked_at = now;
      fleet_gate_->ask(fs.fs.id, slot.backend, fs.fs.mount.mount_point);
      set_wait(fs, Wait{WaitingFor::FleetSlot, {}, asking_text(slot.backend)}, now);
      return false;
    case Standing::Asked:
      set_wait(fs, Wait{WaitingFor::FleetSlot, {}, asking_text(slot.backend)}, now);
      return false;
    case Standing::Waiting:
      set_wait(fs, Wait{WaitingFor::FleetSlot, {}, slot.detail}, now);
      return false;
    case Standing::Unreachable: break;
  }
  const FleetConfig& fleet = *config_.fleet;
  const auto alone_at = fleet_local_at(fs);
  if (!alone_at || now < *alone_at) {
    set_wait(fs, Wait{WaitingFor::FleetSlot, {}, unreachable_text(slot)}, now);
    return false;
  }
  slot.standing = Standing::Local;
  slot.last_used = now;
  log_event(EventId::FleetUnreachable, spdlog::level::warn,
            event_fields(fs.fs, {{"BACKEND", slot.backend}, {"REASON", slot.detail}}),
            fmt::format("{}: etcd unreachable for {} ({}); trimming WITHOUT the fleet's cap on "
                        "{} (on_unreachable = \"local\")",
                        fs.fs.mount.mount_point, format_duration(fleet.unreachable_after),
                        slot.detail, slot.backend));
  return true;
}

void Manager::give_back_slot(Tracked& fs, std::string_view why, TimePoint now) {
  FleetSlot& slot = fs.slot;
  if (slot.standing == Standing::None) return;
  if (fleet_gate_) fleet_gate_->give_back(fs.fs.id);
  if (slot.standing == Standing::Held)
    log_event(EventId::FleetSlotReleased, spdlog::level::info,
              event_fields(fs.fs, {{"BACKEND", slot.backend}}),
              fmt::format("{}: gave back its slot of {} ({})", fs.fs.mount.mount_point,
                          slot.backend, why));
  else if (slot.standing != Standing::Local)
    fleet_waited_ += std::chrono::duration_cast<Duration>(now - slot.asked_at);
  slot = FleetSlot{};
  if (fs.wait.reason == WaitingFor::FleetSlot) set_wait(fs, Wait{}, now);
}

// When a filesystem waiting on a silent etcd goes on alone, if it will.
std::optional<TimePoint> Manager::fleet_local_at(const Tracked& fs) const {
  const FleetSlot& slot = fs.slot;
  if (!slot_required(fs) || slot.standing != Standing::Unreachable || !slot.unreachable_since ||
      config_.fleet->on_unreachable != OnUnreachable::Local)
    return std::nullopt;
  return *slot.unreachable_since + config_.fleet->unreachable_after;
}

// A slot is held only while something is trimmed (docs/fleet.md), and
// through the duty budget's pause after its holder's last chunk: pacing is
// trimming, slowly, and the next holder must not start inside the pause.
void Manager::review_slot(Tracked& fs, TimePoint now, SteadyPoint mono) {
  FleetSlot& slot = fs.slot;
  if (slot.standing == Standing::None) return;
  if (slot.pacing) {
    const bool same_backend = slot_required(fs) && fs.policy.backend == slot.backend;
    if (slot.standing == Standing::Held && same_backend && mono < slot.pacing->until) return;
    // Held up, if it is, from the pause's end on.
    slot.last_used = std::max(slot.last_used, std::min(slot.pacing->wall_until, now));
    slot.pacing.reset();
  }
  if (!fs.pass || !slot_required(fs) || fs.policy.backend != slot.backend) {
    give_back_slot(fs, "its pass ended", now);
    return;
  }
  if (slot.standing != Standing::Held || fs.in_flight) return;
  const Duration lease_ttl = config_.fleet->lease_ttl;
  if (!keep_slot_while_held_up(std::chrono::duration_cast<Duration>(now - slot.last_used),
                               lease_ttl))
    give_back_slot(fs, "held up for longer than the lease TTL of " + format_duration(lease_ttl),
                   now);
}

// Every end of a held slot is in the journal, so that the spans a host
// held can be read from it (Acquired, then Released or Lost).
void Manager::log_slot_lost(const Tracked& fs, const std::string& why) {
  log_event(EventId::FleetSlotLost, spdlog::level::warn,
            event_fields(fs.fs, {{"BACKEND", fs.slot.backend}, {"REASON", why}}),
            fmt::format("{}: lost its place with {} ({}); asking again", fs.fs.mount.mount_point,
                        fs.slot.backend, why));
}

void Manager::fleet_answer(const std::string& id, SlotAnswer answer, const std::string& detail,
                           TimePoint now) {
  Tracked* found = find(id);
  if (!found || found->slot.standing == Standing::None) return;  // given back meanwhile
  Tracked& fs = *found;
  FleetSlot& slot = fs.slot;
  switch (answer) {
    case SlotAnswer::Granted:
      if (slot.standing != Standing::Held && slot.standing != Standing::Local) {
        const auto waited = std::chrono::duration_cast<Duration>(now - slot.asked_at);
        fleet_waited_ += waited;
        log_event(EventId::FleetSlotAcquired, spdlog::level::info,
                  event_fields(fs.fs, {{"BACKEND", slot.backend},
                                       {"WAIT_USEC", std::to_string(waited.count())}}),
                  fmt::format("{}: holds a slot of {} (waited {})", fs.fs.mount.mount_point,
                              slot.backend, format_duration(waited)));
      }
      slot.standing = Standing::Held;
      slot.last_used = now;
      slot.unreachable_since.reset();
      break;
    case SlotAnswer::Waiting:
      if (slot.allows_trimming()) slot.revoked = fs.in_flight.has_value();
      if (slot.standing == Standing::Held) {
        slot.asked_at = now;
        log_slot_lost(fs, detail);
      }
      slot.standing = Standing::Waiting;
      slot.detail = detail;
      slot.unreachable_since.reset();
      break;
    case SlotAnswer::Lost:
      log_slot_lost(fs, detail);
      if (fleet_gate_) fleet_gate_->give_back(fs.fs.id);
      slot = FleetSlot{};
      slot.revoked = fs.in_flight.has_value();
      break;
    case SlotAnswer::Unreachable:
      if (slot.standing == Standing::Local) break;  // already trimming alone, said so
      if (slot.standing == Standing::Held) log_slot_lost(fs, detail);
      if (!slot.unreachable_since) slot.unreachable_since = now;
      slot.standing = Standing::Unreachable;
      slot.detail = detail;
      break;
  }
  notify(fs, now);
  notify_manager();
}

void Manager::fleet_restarted(TimePoint now) {
  for (auto& [id, fs] : filesystems_) {
    if (fs->slot.standing == Standing::None) continue;
    if (fs->slot.standing == Standing::Held) log_slot_lost(*fs, "the fleet link restarted");
    fs->slot = FleetSlot{};
    fs->slot.revoked = fs->in_flight.has_value();
    if (fs->wait.reason == WaitingFor::FleetSlot) set_wait(*fs, Wait{}, now);
    notify(*fs, now);
  }
}

}  // namespace trimd
