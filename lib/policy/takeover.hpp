// Taking over inline discard: what to do about a filesystem mounted with
// synchronous `discard`, as pure functions of what is mounted, the policy
// and trimd's record. lib/engine/takeover_controller.hpp carries the decisions
// out; docs/takeover.md explains the design.
#pragma once

#include <optional>
#include <string>

#include "config.hpp"
#include "discard_mode.hpp"
#include "mountinfo.hpp"
#include "state_store.hpp"
#include "time.hpp"

namespace trimd {

// What trimd did about a filesystem's inline discard (the Takeover property).
enum class TakeoverStatus {
  None,         // no synchronous discard: nothing to take over
  Inline,       // synchronous discard left on (policy "warn"): trimctl advises against it
  Ignored,      // synchronous discard left on (policy "ignore"): nothing said
  TakenOver,    // trimd turned discard off and trims the filesystem instead
  NotPossible,  // the policy asks for a takeover that cannot be done: the reason says why
  Failed,       // the remount failed: the reason says how
};
// "none", "inline", "ignored", "taken-over", "not-possible", "failed"
const char* to_string(TakeoverStatus status);

struct TakeoverView {
  TakeoverStatus status = TakeoverStatus::None;
  std::string reason;              // NotPossible, Failed, and Inline after a hand-back
  std::optional<TimePoint> since;  // TakenOver: when
  bool operator==(const TakeoverView&) const = default;
};

// What the decisions look at, for one mounted filesystem.
struct TakeoverFacts {
  std::string mount_point;
  std::string fs_type;
  DiscardMode mode = DiscardMode::None;
  bool read_only = false;
  std::optional<std::string> not_trimmed;  // why trimd does not trim it (X-trimd.skip, ...)
  std::optional<FstabEntry> fstab;         // its line in /etc/fstab, if any
  std::optional<TakeoverRecord> record;    // trimd took it over and owes `discard` back
  MountInstance mount;                     // the mount at mount_point now
  std::string released_reason;             // when released: why (default: on request)
};

// Why trimd let go of a mount whose `discard` someone put back (LetGo).
inline constexpr const char* kDiscardPutBack =
    "'discard' put back by a remount; left as it is until a reload";

enum class TakeoverAction {
  Nothing,
  TurnOff,   // remount with nodiscard, then record the takeover
  Adopt,     // already without discard and recorded: no remount, just own it
  Forget,    // `discard` is back by someone else's hand (or a reboot), or the mount
             // trimd took it from is gone: drop the record
  LetGo,     // someone put `discard` back on the very mount trimd took it from:
             // drop the record and leave that mount alone until a reload
  HandBack,  // remount with discard, then drop the record
};

struct TakeoverDecision {
  TakeoverAction action = TakeoverAction::Nothing;
  TakeoverView view;    // what to show once the action is done
  std::string refusal;  // requests only: why not (action is then Nothing)
  bool operator==(const TakeoverDecision&) const = default;
};

// After every rescan: what the policy asks for now. `released`: handed back
// on request since the last reload, so the policy does not take it again.
TakeoverDecision decide_takeover(const TakeoverFacts& facts, InlineDiscardPolicy policy,
                                 bool released, TimePoint now);
// TakeOver on the bus: overrides the policy, never the obstacles below.
TakeoverDecision decide_take_over_request(const TakeoverFacts& facts, TimePoint now);
// HandBack on the bus, and a clean stop. Only the mount trimd took
// `discard` from gets it back: not one mounted there since.
TakeoverDecision decide_hand_back(const TakeoverFacts& facts);

// Whether the record is about the mount at facts.mount_point now.
MountMatch record_matches(const TakeoverFacts& facts);

// Why a filesystem with synchronous discard cannot be taken over, or nothing.
std::optional<std::string> takeover_obstacle(const TakeoverFacts& facts);

// What a person can do instead for a filesystem whose remount keeps
// `discard` (xfs): the fstab line to change.
std::string fstab_advice(const TakeoverFacts& facts);

// A stop that is the first half of a restart (systemd's job for the unit
// is "restart" or "try-restart" while the old process stops): the
// takeover stays for the next start instead of flapping the mount.
bool stop_is_a_restart(const std::optional<std::string>& unit_job_type);

// Space freed while trimd did not own the filesystem was discarded inline;
// what is freed from the takeover on waits for trimd, so its first pass
// comes this soon after, not a whole interval later.
inline constexpr Duration kFirstPassAfterTakeover = std::chrono::minutes{1};
// When that first pass is due, or nothing when a pass ended since.
std::optional<TimePoint> first_pass_after_takeover(const FsRecord& record);

}  // namespace trimd
