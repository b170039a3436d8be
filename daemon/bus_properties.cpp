#include "bus_properties.hpp"

#include "bus_names.hpp"

namespace trimd::bus {

std::vector<std::string> changed_properties(const FsStatus& before, const FsStatus& after) {
  std::vector<std::string> names;
  auto check = [&names](bool differs, const char* name) {
    if (differs) names.emplace_back(name);
  };
  check(before.mount_point != after.mount_point, "MountPoint");
  check(before.device != after.device, "Device");
  check(before.fs_type != after.fs_type, "FsType");
  check(before.uuid != after.uuid, "UUID");
  check(before.backing_disks != after.backing_disks, "BackingDisks");
  check(before.state != after.state, "State");
  check(before.state_reason != after.state_reason, "StateReason");
  check(before.progress != after.progress, "Progress");
  check(before.size != after.size, "Size");
  check(timestamp_usec(before.last_trim_start) != timestamp_usec(after.last_trim_start),
        "LastTrimStart");
  check(timestamp_usec(before.last_trim_end) != timestamp_usec(after.last_trim_end),
        "LastTrimEnd");
  check(before.last_result != after.last_result, "LastResult");
  check(before.last_bytes_trimmed != after.last_bytes_trimmed, "LastBytesTrimmed");
  check(timestamp_usec(before.next_trim) != timestamp_usec(after.next_trim), "NextTrim");
  check(before.inline_discard != after.inline_discard, "InlineDiscard");
  check(before.discard_mode != after.discard_mode, "DiscardMode");
  check(before.takeover.status != after.takeover.status, "Takeover");
  check(before.takeover.reason != after.takeover.reason, "TakeoverReason");
  check(timestamp_usec(before.takeover.since) != timestamp_usec(after.takeover.since),
        "TakenOverSince");
  check(before.last_trimming != after.last_trimming, "LastTrimDuration");
  check(before.last_waited != after.last_waited, "LastWaitDuration");
  check(before.lifetime.bytes != after.lifetime.bytes, "BytesTrimmedTotal");
  check(before.lifetime.passes != after.lifetime.passes, "PassesTotal");
  check(before.lifetime.preemptions != after.lifetime.preemptions, "PreemptionsTotal");
  check(before.lifetime.pauses != after.lifetime.pauses, "PausesTotal");
  check(before.lifetime.failures != after.lifetime.failures, "FailuresTotal");
  return names;
}

bool Throttle::try_send(Clock::time_point now) {
  if (wait(now) > Clock::duration::zero()) return false;
  last_sent_ = now;
  sent_before_ = true;
  return true;
}

Throttle::Clock::duration Throttle::wait(Clock::time_point now) const {
  if (!sent_before_) return Clock::duration::zero();
  const auto next = last_sent_ + interval_;
  return next > now ? next - now : Clock::duration::zero();
}

}  // namespace trimd::bus
