// The manager's record of one tracked filesystem and of its pass. Private to
// the manager's implementation files; nothing outside lib/engine/manager*.cpp
// includes it.
#pragma once

#include <optional>
#include <string>

#include "log_event.hpp"
#include "manager.hpp"

namespace trimd {

// The journal fields that say which filesystem a pass event is about, then
// the event's own `extra` fields.
LogFields event_fields(const DiscoveredFs& fs, const LogFields& extra = {});

// Why a filesystem that wants to trim does not right now (manager.hpp has
// the values): Nothing while it is not held up, pacing between chunks
// included.
struct Wait {
  WaitingFor reason = WaitingFor::Nothing;
  BusyDisk busy;       // for DisksBusy
  std::string detail;  // for FleetSlot: who holds the slots, or etcd's error
  std::string text() const;
};

// A TrimNow (or --once) that no pass has taken up yet.
struct TrimRequest {
  bool ignore_idle = false;
};

// One pass over a filesystem, from its first chunk to its result.
struct Pass {
  std::uint64_t cursor = 0;
  TimePoint start{};
  std::uint64_t bytes_reported = 0;
  std::uint64_t bytes_discarded = 0;
  bool discard_measured = true;
  unsigned chunks = 0;
  unsigned foreground_pauses = 0;  // times it stopped between chunks for foreground I/O
  unsigned preemptions = 0;        // chunks killed for foreground I/O
  unsigned preempted_in_a_row = 0;
  unsigned timed_out_in_a_row = 0;   // chunks killed for their time limit
  std::uint64_t timed_out_len = 0;   // the length of the last one
  unsigned limit_doublings = 0;      // chunk_time_limit(): for chunks that cannot shrink
  std::uint64_t shrink_cap = 0;      // after repeated preemptions: chunk length cap (0 = none)
  std::uint64_t last_chunk_len = 0;  // 0 before the first chunk
  bool forced = false;               // asked for (TrimNow, --once), not just due
  bool ignore_idle = false;
  bool cancel_requested = false;             // finished when the chunk in flight reports back
  bool gentle = false;                       // overdue: trimming although the disks are busy
  bool battery_gentle = false;               // on battery, on_battery = "gentle"
  SteadyPoint not_before{};                  // pacing and retry backoff, on the monotonic clock
  WaitingFor backoff = WaitingFor::Nothing;  // not_before: pacing (Nothing) or Retry
  // TrimStarted: sent once its first chunk has been handed out (pending
  // between the hand-out and the status that says "trimming").
  bool announced = false;
  bool announce_pending = false;
  // Time spent waiting (not pacing): closed waits plus the one under way.
  Duration waited{0};
  std::optional<TimePoint> waiting_since;
  Duration waited_until(TimePoint now) const {
    if (!waiting_since || now < *waiting_since) return waited;
    return waited + std::chrono::duration_cast<Duration>(now - *waiting_since);
  }
};

// Gentle chunks and pauses: overdue on busy disks, or on battery.
inline bool gentle_pace(const Pass& pass) { return pass.gentle || pass.battery_gentle; }

// Waiting holds the pass up; pacing between chunks (the pause, and the duty
// budget's) is part of trimming.
inline bool holds_up(WaitingFor reason) {
  return reason != WaitingFor::Nothing && reason != WaitingFor::Due && reason != WaitingFor::Pacing;
}

// A filesystem's place in its backend's fleet-wide queue (fleet_gate.hpp).
struct FleetSlot {
  enum class Standing {
    None,         // not asked (or given back)
    Asked,        // asked; no answer yet
    Waiting,      // others hold the slots
    Held,         // may trim
    Unreachable,  // etcd is silent; on_unreachable decides
    Local,        // etcd silent for unreachable_after: trimming as a lone host
  };
  Standing standing = Standing::None;
  std::string backend;  // what it was asked of
  std::string detail;   // Waiting: the holders; Unreachable: the error
  TimePoint asked_at{};
  std::optional<TimePoint> unreachable_since;
  // Granted, or the last chunk came back: what "held up too long" counts from.
  TimePoint last_used{};
  bool revoked = false;  // lost while a chunk ran: that chunk is stopped
  // [fleet] duty: the pause its last chunk earned. The slot is kept until it
  // has passed, even once the pass has ended, so that the next holder does
  // not start inside it (docs/fleet.md, "The duty budget and the lease").
  std::optional<DutyPause> pacing;
  bool allows_trimming() const { return standing == Standing::Held || standing == Standing::Local; }
};

struct Manager::Tracked {
  DiscoveredFs fs;
  TrimPolicy policy;
  TimePoint due{};
  bool paused = false;
  bool unsupported = false;  // learned from FITRIM itself
  std::string unsupported_reason;
  bool vanished = false;  // gone from the mount table while a chunk ran
  unsigned gone_retries = 0;

  std::optional<Pass> pass;
  std::optional<TrimRequest> request;
  std::optional<std::uint64_t> in_flight;  // the serial of the chunk in the kernel
  Wait wait;
  DutyPause pacing;  // while `wait` is Pacing: the pause that holds the next chunk
  // Range per second of FITRIM time, learned from this filesystem's last
  // chunks (0 = nothing learned yet): sizes chunks to the policy's chunk_time.
  double range_bytes_per_sec = 0;
  // The mean device time of one discard, learned likewise (0 = unknown): how
  // fast a chunk may grow (chunk_sizing.hpp).
  Duration per_discard{0};
  // The device time of a chunk that did not finish, told by chunk_discarded
  // and charged to the budget once it is reported back.
  Duration unreported_device_time{0};
  // What its chunks have cost the device since trimd started.
  Duration discard_busy{0};

  TakeoverView takeover;
  FleetSlot slot;

  std::optional<FsStatus> last_sent;

  bool trimmable() const {
    return !unsupported && !fs.unsupported_reason && !fs.disabled_reason && policy.enabled &&
           !(policy.skip_rotational && fs.rotational()) && in_scope();
  }
  bool cannot_discard() const { return unsupported || fs.unsupported_reason.has_value(); }
  bool in_scope() const { return policy.scope == TrimPolicy::Scope::Mounted || fs.in_fstab; }
  std::string untrimmable_reason() const {
    if (unsupported) return unsupported_reason;
    if (fs.unsupported_reason) return *fs.unsupported_reason;
    if (fs.disabled_reason) return *fs.disabled_reason;
    if (!policy.enabled) return "disabled in the configuration";
    if (policy.skip_rotational && fs.rotational()) return "rotational disk (skip_rotational)";
    if (!in_scope()) return "not listed in /etc/fstab (scope = \"fstab\")";
    return {};
  }
};

}  // namespace trimd
