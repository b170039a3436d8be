// Takeover decisions, carried out.
#include "takeover_controller.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace trimd {

namespace {

std::optional<FstabEntry> fstab_entry(const std::vector<FstabEntry>& fstab,
                                      const std::string& mount_point) {
  // The last line for a mount point is the one mount(8) would use.
  std::optional<FstabEntry> found;
  for (const auto& entry : fstab)
    if (entry.mount_point == mount_point) found = entry;
  return found;
}

// The options a verified remount left, until the next rescan reads them:
// a stop right after a takeover must know the filesystem has no discard.
void note_discard(DiscoveredFs& fs, bool discard) {
  auto& options = fs.mount.super_options;
  options.erase(std::remove_if(options.begin(), options.end(),
                               [](const std::string& o) {
                                 return o == "discard" || o == "nodiscard" ||
                                        o.rfind("discard=", 0) == 0;
                               }),
                options.end());
  if (discard) options.emplace_back("discard");
}

}  // namespace

TakeoverController::TakeoverController(Manager& manager, Remounter& remounter)
    : manager_(manager), remounter_(remounter) {}

TrimPolicy TakeoverController::policy_for(const DiscoveredFs& fs) const {
  return manager_.config().policy_for(fs.mount.mount_point, fs.uuid, fs.mount.fs_type);
}

TakeoverFacts TakeoverController::facts_for(const DiscoveredFs& fs, TimePoint now) const {
  TakeoverFacts facts;
  facts.mount_point = fs.mount.mount_point;
  facts.fs_type = fs.mount.fs_type;
  facts.mode = fs.discard_mode();
  facts.read_only = fs.mount.read_only();
  if (const auto status = manager_.status(fs.id, now);
      status && (status->state == FsState::Disabled || status->state == FsState::Unsupported))
    facts.not_trimmed = status->state_reason;
  facts.fstab = fstab_entry(fstab_, fs.mount.mount_point);
  facts.mount = remounter_.instance_at(fs.mount.mount_point, fs.mount.super_options);
  if (const auto it = released_.find(fs.id); it != released_.end())
    facts.released_reason = it->second;
  const auto& records = manager_.persistent_state();
  if (const auto it = records.find(fs.id); it != records.end())
    facts.record = it->second.taken_over;
  return facts;
}

const DiscoveredFs& TakeoverController::mounted(const std::string& id) const {
  const auto it = mounted_.find(id);
  if (it == mounted_.end())
    throw ManagerError(ManagerError::Kind::NotFound, "no filesystem with id " + id);
  return it->second;
}

bool TakeoverController::remount(const DiscoveredFs& fs, bool discard, TakeoverView& view) {
  const auto outcome = remounter_.set_discard({fs.mount.mount_point, fs.root_device}, discard);
  const std::string& where = fs.mount.mount_point;
  switch (outcome.result) {
    case RemountResult::Done:
      if (const auto it = mounted_.find(fs.id); it != mounted_.end())
        note_discard(it->second, discard);
      spdlog::info("{}: {}", where,
                   discard ? "inline discard handed back (remounted with discard)"
                           : "inline discard taken over (remounted with nodiscard); "
                             "trimd trims it instead");
      return true;
    case RemountResult::Ignored:
      view = {TakeoverStatus::NotPossible, outcome.message, std::nullopt};
      break;
    case RemountResult::Failed:
      view = {TakeoverStatus::Failed, outcome.message, std::nullopt};
      break;
  }
  spdlog::error("{}: cannot {}: {}", where,
                discard ? "hand back inline discard" : "take over inline discard", outcome.message);
  return false;
}

bool TakeoverController::carry_out(const DiscoveredFs& fs, const TakeoverDecision& decision,
                                   TakeoverOrigin origin, TimePoint now) {
  const auto& records = manager_.persistent_state();
  const auto it = records.find(fs.id);
  const std::optional<TakeoverRecord> record =
      it == records.end() ? std::nullopt : it->second.taken_over;
  TakeoverView view = decision.view;
  const MountInstance mount = remounter_.instance_at(fs.mount.mount_point, fs.mount.super_options);
  switch (decision.action) {
    case TakeoverAction::Nothing:
      if (const auto status = manager_.status(fs.id, now);
          view.status == TakeoverStatus::NotPossible && status && status->takeover != view)
        spdlog::warn("{}: mounted with 'discard', not taken over: {}", fs.mount.mount_point,
                     view.reason);
      manager_.set_takeover(fs.id, view, record, now);
      return false;
    case TakeoverAction::Adopt: {
      // After a restart in a new mount namespace: ids of this one from now on.
      auto owned = record;
      if (owned) owned->mount = mount;
      manager_.set_takeover(fs.id, view, owned, now);
      return false;
    }
    case TakeoverAction::Forget: forget(fs, view, now); return false;
    case TakeoverAction::LetGo:
      spdlog::info(
          "{}: 'discard' was put back by a remount; trimd leaves it as it is until the "
          "next reload",
          fs.mount.mount_point);
      released_[fs.id] = kDiscardPutBack;
      manager_.set_takeover(fs.id, view, std::nullopt, now);
      return false;
    case TakeoverAction::TurnOff: {
      const bool done = remount(fs, false, view);
      if (!done) failed_[fs.id] = view;
      manager_.set_takeover(fs.id, view,
                            done ? std::optional{TakeoverRecord{now, origin, mount}} : record, now);
      return done;
    }
    case TakeoverAction::HandBack: {
      TakeoverView kept{
          TakeoverStatus::TakenOver, {}, record ? std::optional{record->since} : std::nullopt};
      const bool done = remount(fs, true, kept);
      manager_.set_takeover(fs.id, done ? view : kept, done ? std::nullopt : record, now);
      return done;
    }
  }
  return false;
}

void TakeoverController::forget(const DiscoveredFs& fs, const TakeoverView& view, TimePoint now) {
  if (fs.inline_discard())
    spdlog::info("{}: mounted with discard again; trimd no longer owes it back",
                 fs.mount.mount_point);
  else
    spdlog::info(
        "{}: unmounted and mounted again without discard since trimd took it over; "
        "trimd no longer owes that mount 'discard'",
        fs.mount.mount_point);
  manager_.set_takeover(fs.id, view, std::nullopt, now);
}

bool TakeoverController::reconcile(const std::vector<DiscoveredFs>& found,
                                   const std::vector<FstabEntry>& fstab, TimePoint now) {
  fstab_ = fstab;
  mounted_.clear();
  for (const auto& fs : found) mounted_.emplace(fs.id, fs);
  bool remounted = false;
  for (const auto& fs : found) {
    const TakeoverFacts facts = facts_for(fs, now);
    const auto policy = policy_for(fs).inline_discard;
    TakeoverDecision decision = decide_takeover(facts, policy, released_.count(fs.id) > 0, now);
    if (decision.action == TakeoverAction::TurnOff && failed_.count(fs.id))
      decision = {TakeoverAction::Nothing, failed_.at(fs.id), {}};
    remounted = carry_out(fs, decision, TakeoverOrigin::Policy, now) || remounted;
  }
  return remounted;
}

std::map<std::string, TakeoverDecision> TakeoverController::preview(
    const std::vector<DiscoveredFs>& found, const std::vector<FstabEntry>& fstab, TimePoint now) {
  fstab_ = fstab;
  std::map<std::string, TakeoverDecision> decisions;
  for (const auto& fs : found)
    decisions[fs.id] = decide_takeover(facts_for(fs, now), policy_for(fs).inline_discard,
                                       released_.count(fs.id) > 0, now);
  return decisions;
}

void TakeoverController::take_over(const std::vector<std::string>& ids, TimePoint now) {
  if (ids.empty())
    throw ManagerError(ManagerError::Kind::InvalidArgument, "name the filesystems to take over");
  std::vector<std::pair<const DiscoveredFs*, TakeoverDecision>> plan;
  for (const auto& id : ids) {
    const DiscoveredFs& fs = mounted(id);
    auto decision = decide_take_over_request(facts_for(fs, now), now);
    if (!decision.refusal.empty())
      throw ManagerError(ManagerError::Kind::NotSupported, decision.refusal);
    plan.emplace_back(&fs, std::move(decision));
  }
  for (const auto& [fs, decision] : plan) {
    released_.erase(fs->id);
    failed_.erase(fs->id);
    carry_out(*fs, decision, TakeoverOrigin::Request, now);
    const auto status = manager_.status(fs->id, now);
    if (status && status->takeover.status != TakeoverStatus::TakenOver)
      throw std::runtime_error(fs->mount.mount_point + ": " + status->takeover.reason);
  }
}

void TakeoverController::hand_back(const std::vector<std::string>& ids, TimePoint now) {
  if (ids.empty())
    throw ManagerError(ManagerError::Kind::InvalidArgument, "name the filesystems to hand back");
  std::vector<std::pair<const DiscoveredFs*, TakeoverDecision>> plan;
  for (const auto& id : ids) {
    const DiscoveredFs& fs = mounted(id);
    auto decision = decide_hand_back(facts_for(fs, now));
    if (!decision.refusal.empty())
      throw ManagerError(ManagerError::Kind::InvalidArgument, decision.refusal);
    plan.emplace_back(&fs, std::move(decision));
  }
  for (const auto& [fs, decision] : plan) {
    released_[fs->id] = "handed back on request";
    const bool remounted = carry_out(*fs, decision, TakeoverOrigin::Request, now);
    if (decision.action == TakeoverAction::HandBack && !remounted)
      throw std::runtime_error(fs->mount.mount_point +
                               ": the remount with discard failed; see the log");
  }
}

void TakeoverController::stop(TimePoint now, bool restarting) {
  for (const auto& [id, fs] : mounted_) {
    const auto decision = decide_hand_back(facts_for(fs, now));
    if (decision.action == TakeoverAction::Forget)
      carry_out(fs, decision, TakeoverOrigin::Request, now);
    if (decision.action != TakeoverAction::HandBack) continue;
    if (restarting) {
      spdlog::info("{}: restarting: stays without inline discard for the next start",
                   fs.mount.mount_point);
      continue;
    }
    if (!manager_.config().trim.hand_back_on_stop) {
      spdlog::warn(
          "{}: stays without inline discard while trimd is stopped (hand_back_on_stop = "
          "false); the next start takes it up again",
          fs.mount.mount_point);
      continue;
    }
    carry_out(fs, decision, TakeoverOrigin::Request, now);
  }
}

bool TakeoverController::owes_discard() const {
  const TimePoint any{};
  return std::any_of(mounted_.begin(), mounted_.end(), [&](const auto& entry) {
    return decide_hand_back(facts_for(entry.second, any)).action == TakeoverAction::HandBack;
  });
}

void TakeoverController::policy_changed() {
  released_.clear();
  failed_.clear();
}

}  // namespace trimd
