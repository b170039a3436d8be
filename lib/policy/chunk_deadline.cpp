#include "chunk_deadline.hpp"

#include <algorithm>

namespace trimd {

Duration enforced_time_limit(Duration time_limit, MountHold hold, bool foreground_seen) {
  if (time_limit.count() <= 0) return time_limit;
  if (hold == MountHold::MountItself || foreground_seen) return time_limit;
  return std::max(time_limit, Duration{kMaxChunkTimeLimit});
}

ChunkDeadline::ChunkDeadline(SteadyPoint started, Duration time_limit, MountHold hold)
    : started_(started), time_limit_(time_limit), hold_(hold) {}

Duration ChunkDeadline::limit() const {
  return enforced_time_limit(time_limit_, hold_, foreground_seen_);
}

bool ChunkDeadline::passed(SteadyPoint now) const {
  const Duration limit_now = limit();
  return limit_now.count() > 0 && now - started_ >= limit_now;
}

}  // namespace trimd
