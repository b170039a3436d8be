// The manager's record of one tracked filesystem. Private to the manager's
// implementation files; nothing outside lib/manager*.cpp includes it.
#pragma once

#include <optional>
#include <string>

#include "manager.hpp"

namespace trimd {

struct Manager::Tracked {
  DiscoveredFs fs;
  TrimPolicy policy;
  TimePoint due{};
  bool paused = false;
  bool unsupported = false;  // learned from FITRIM itself
  std::string unsupported_reason;
  bool vanished = false;  // gone from the mount table while a chunk ran
  unsigned gone_retries = 0;

  // The current pass.
  bool pass_active = false;
  std::uint64_t cursor = 0;
  TimePoint pass_start{};
  std::uint64_t pass_bytes_reported = 0;
  std::uint64_t pass_bytes_discarded = 0;
  bool discard_measured = true;
  unsigned chunks = 0;
  unsigned foreground_pauses = 0;  // times the pass stopped for foreground I/O
  bool forced = false;             // asked for (TrimNow, --once), not just due
  bool ignore_idle = false;
  bool cancel_requested = false;
  bool in_flight = false;
  bool waiting_for_idle = false;
  bool waiting_for_disk = false;
  bool gentle = false;
  // Range per second of FITRIM time, learned from this filesystem's last
  // chunks (0 = nothing learned yet): sizes chunks to the policy's chunk_time.
  double range_bytes_per_sec = 0;
  std::uint64_t last_chunk_len = 0;  // of this pass; 0 before its first chunk
  TimePoint not_before{};
  std::string wait_reason;

  TakeoverView takeover;

  std::optional<FsStatus> last_sent;

  bool trimmable() const {
    return !unsupported && !fs.unsupported_reason && !fs.disabled_reason && policy.enabled &&
           !(policy.skip_rotational && fs.rotational());
  }
  std::string untrimmable_reason() const {
    if (unsupported) return unsupported_reason;
    if (fs.unsupported_reason) return *fs.unsupported_reason;
    if (fs.disabled_reason) return *fs.disabled_reason;
    if (!policy.enabled) return "disabled in the configuration";
    if (policy.skip_rotational && fs.rotational()) return "rotational disk (skip_rotational)";
    return {};
  }
};

}  // namespace trimd
