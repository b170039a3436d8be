// The takeover decisions: which filesystems lose their `discard`, which get
// it back, and what trimd says about each.
#include "takeover.hpp"

#include <algorithm>

#include "fs_kind.hpp"

namespace trimd {

namespace {

// Measured on 6.18: a reconfigure with nodiscard takes effect on these.
bool remount_turns_discard_off(std::string_view fs_type) {
  const FsKind kind = fs_kind(fs_type);
  return kind == FsKind::Ext4 || kind == FsKind::Btrfs;
}

TakeoverDecision show(TakeoverStatus status, std::string reason = {}) {
  return {TakeoverAction::Nothing, {status, std::move(reason), std::nullopt}, {}};
}

TakeoverDecision refuse(std::string why) { return {TakeoverAction::Nothing, {}, std::move(why)}; }

TakeoverDecision act(TakeoverAction action, TakeoverView view) {
  return {action, std::move(view), {}};
}

TakeoverView taken_over_since(TimePoint since) { return {TakeoverStatus::TakenOver, {}, since}; }

// A filesystem with synchronous discard that trimd leaves as it is.
TakeoverView left_inline(const TakeoverFacts& facts, InlineDiscardPolicy policy, bool released) {
  if (policy == InlineDiscardPolicy::Ignore) return {TakeoverStatus::Ignored, {}, std::nullopt};
  if (policy == InlineDiscardPolicy::Warn) return {TakeoverStatus::Inline, {}, std::nullopt};
  if (released)
    return {TakeoverStatus::Inline,
            facts.released_reason.empty() ? "handed back on request" : facts.released_reason,
            std::nullopt};
  return {TakeoverStatus::NotPossible, takeover_obstacle(facts).value_or(""), std::nullopt};
}

std::string join_options(const std::vector<std::string>& options) {
  std::string out;
  for (const auto& option : options) out += (out.empty() ? "" : ",") + option;
  return out.empty() ? "defaults" : out;
}

// fstab(5) fields escape blanks and backslashes as octal.
std::string fstab_field(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == ' ')
      out += "\\040";
    else if (c == '\t')
      out += "\\011";
    else if (c == '\\')
      out += "\\134";
    else
      out += c;
  }
  return out;
}

std::string fstab_line(const FstabEntry& entry, const std::vector<std::string>& options) {
  return fstab_field(entry.source) + " " + fstab_field(entry.mount_point) + " " + entry.fs_type +
         " " + fstab_field(join_options(options));
}

bool is_discard_option(const std::string& option) {
  return option == "discard" || option.rfind("discard=", 0) == 0;
}

}  // namespace

const char* to_string(TakeoverStatus status) {
  switch (status) {
    case TakeoverStatus::None: return "none";
    case TakeoverStatus::Inline: return "inline";
    case TakeoverStatus::Ignored: return "ignored";
    case TakeoverStatus::TakenOver: return "taken-over";
    case TakeoverStatus::NotPossible: return "not-possible";
    case TakeoverStatus::Failed: return "failed";
  }
  return "none";
}

std::string fstab_advice(const TakeoverFacts& facts) {
  if (!facts.fstab) return "mount it again without 'discard' (unmount, then mount)";
  std::vector<std::string> options;
  std::copy_if(facts.fstab->options.begin(), facts.fstab->options.end(),
               std::back_inserter(options), [](const auto& o) { return !is_discard_option(o); });
  return "in /etc/fstab change \"" + fstab_line(*facts.fstab, facts.fstab->options) + "\" to \"" +
         fstab_line(*facts.fstab, options) + "\", then unmount and mount it again";
}

std::optional<std::string> takeover_obstacle(const TakeoverFacts& facts) {
  if (facts.read_only) return "read-only: trimd changes nothing on it";
  if (facts.not_trimmed) return "trimd does not trim it: " + *facts.not_trimmed;
  if (fs_kind(facts.fs_type) == FsKind::Xfs)
    return "xfs keeps 'discard' across a remount (it ignores the options it cannot change); " +
           fstab_advice(facts);
  if (!remount_turns_discard_off(facts.fs_type))
    return "trimd takes over only ext4 and btrfs, where a remount without 'discard' is known to "
           "work; " +
           fstab_advice(facts);
  return std::nullopt;
}

MountMatch record_matches(const TakeoverFacts& facts) {
  if (!facts.record || !facts.record->mount) return MountMatch::Unknown;
  return match_mount(*facts.record->mount, facts.mount);
}

namespace {

TakeoverDecision decide_without_record(const TakeoverFacts& facts, InlineDiscardPolicy policy,
                                       bool released, TimePoint now) {
  const bool wanted = policy == InlineDiscardPolicy::Takeover && !released;
  if (facts.mode != DiscardMode::Sync) return show(TakeoverStatus::None);
  if (!wanted) return {TakeoverAction::Nothing, left_inline(facts, policy, released), {}};
  if (const auto obstacle = takeover_obstacle(facts))
    return show(TakeoverStatus::NotPossible, *obstacle);
  return act(TakeoverAction::TurnOff, taken_over_since(now));
}

// `discard` is back on the mount trimd took it from: an admin's remount said so.
TakeoverDecision let_go(const TakeoverFacts& facts, InlineDiscardPolicy policy) {
  if (policy != InlineDiscardPolicy::Takeover)
    return act(TakeoverAction::LetGo, left_inline(facts, policy, true));
  return act(TakeoverAction::LetGo, {TakeoverStatus::Inline, kDiscardPutBack, std::nullopt});
}

}  // namespace

TakeoverDecision decide_takeover(const TakeoverFacts& facts, InlineDiscardPolicy policy,
                                 bool released, TimePoint now) {
  if (!facts.record) return decide_without_record(facts, policy, released, now);
  const MountMatch match = record_matches(facts);
  if (match == MountMatch::Other) {
    // Unmounted and mounted again since, or a reboot: the record is not
    // about this mount, which is judged as if trimd had never seen it.
    TakeoverDecision fresh = decide_without_record(facts, policy, released, now);
    if (fresh.action == TakeoverAction::Nothing) fresh.action = TakeoverAction::Forget;
    return fresh;
  }
  const bool wanted = policy == InlineDiscardPolicy::Takeover && !released;
  if (facts.mode == DiscardMode::None) {
    // Taken over by policy, and the policy no longer says so: give it back.
    if (facts.record->origin == TakeoverOrigin::Policy && !wanted && !facts.read_only)
      return act(TakeoverAction::HandBack, left_inline(facts, policy, released));
    return act(TakeoverAction::Adopt, taken_over_since(facts.record->since));
  }
  if (match == MountMatch::Same && facts.mode == DiscardMode::Sync) return let_go(facts, policy);
  // Discard is back (a reboot mounted it from fstab, or an admin remounted).
  if (facts.mode == DiscardMode::Sync && wanted && !takeover_obstacle(facts))
    return act(TakeoverAction::TurnOff, taken_over_since(now));
  const TakeoverView view =
      facts.mode == DiscardMode::Sync ? left_inline(facts, policy, released) : TakeoverView{};
  return act(TakeoverAction::Forget, view);
}

TakeoverDecision decide_take_over_request(const TakeoverFacts& facts, TimePoint now) {
  if (facts.record && facts.mode == DiscardMode::None)
    return act(TakeoverAction::Adopt, taken_over_since(facts.record->since));
  if (facts.mode == DiscardMode::Async)
    return refuse(facts.mount_point +
                  ": discard=async is not inline discard (it is batched in the background); "
                  "trimd leaves it alone");
  if (facts.mode == DiscardMode::None)
    return refuse(facts.mount_point + ": not mounted with 'discard': nothing to take over");
  if (const auto obstacle = takeover_obstacle(facts))
    return refuse(facts.mount_point + ": cannot be taken over: " + *obstacle);
  return act(TakeoverAction::TurnOff, taken_over_since(now));
}

TakeoverDecision decide_hand_back(const TakeoverFacts& facts) {
  if (!facts.record) return refuse(facts.mount_point + ": trimd did not take it over");
  if (facts.mode != DiscardMode::None) return act(TakeoverAction::Forget, {});
  // Mounted again without `discard` since: that is how it was mounted, not
  // what trimd did.
  if (record_matches(facts) == MountMatch::Other) return act(TakeoverAction::Forget, {});
  return act(TakeoverAction::HandBack, {TakeoverStatus::Inline, "handed back", std::nullopt});
}

bool stop_is_a_restart(const std::optional<std::string>& unit_job_type) {
  return unit_job_type && (*unit_job_type == "restart" || *unit_job_type == "try-restart");
}

std::optional<TimePoint> first_pass_after_takeover(const FsRecord& record) {
  if (!record.taken_over) return std::nullopt;
  const TimePoint since = record.taken_over->since;
  if (record.last_end && *record.last_end >= since) return std::nullopt;
  return since + kFirstPassAfterTakeover;
}

}  // namespace trimd
