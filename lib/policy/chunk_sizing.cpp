#include "chunk_sizing.hpp"

#include <algorithm>
#include <chrono>

namespace trimd {

namespace {

// With chunk_time, the first chunk of a pass is at most this long (nothing
// is learned yet), and no chunk is made shorter than the minimum: below that
// the cost of a call is mostly its fixed cost.
constexpr std::uint64_t kFirstTimedChunkBytes = 64ull << 20;
constexpr std::uint64_t kMinTimedChunkBytes = 16ull << 20;
// Ranges this long are "to the end" (btrfs's tail): no rate to learn.
constexpr std::uint64_t kUnboundedRange = 1ull << 62;

}  // namespace

double chunk_growth(Duration per_discard) {
  if (per_discard <= Duration{0} || per_discard >= kSlowDiscardTime) return 2;
  const auto faster = static_cast<double>(kSlowDiscardTime / per_discard);  // whole times
  return std::min(2 * faster, kMaxChunkGrowth);
}

std::uint64_t chunk_length(const TrimPolicy& policy, bool gentle, double range_bytes_per_sec,
                           std::uint64_t previous_len, Duration per_discard) {
  std::uint64_t wanted = gentle ? policy.gentle_chunk_bytes : policy.chunk_bytes;
  if (policy.chunk_time.count() <= 0) return wanted;
  const double grown = static_cast<double>(previous_len) * chunk_growth(per_discard);
  if (previous_len > 0 && grown < static_cast<double>(wanted))
    wanted = static_cast<std::uint64_t>(grown);
  if (range_bytes_per_sec <= 0) return std::min(wanted, kFirstTimedChunkBytes);
  const double seconds = std::chrono::duration<double>(policy.chunk_time).count();
  const double fit = range_bytes_per_sec * seconds;
  if (fit >= static_cast<double>(wanted)) return wanted;
  return std::min(wanted, std::max(kMinTimedChunkBytes, static_cast<std::uint64_t>(fit)));
}

std::uint64_t shrunk_after_preemption(std::uint64_t preempted_len) {
  return std::max(kMinShrunkChunkBytes, std::min(preempted_len, kUnboundedRange) / 2);
}

Duration chunk_time_limit(const TrimPolicy& policy, unsigned doublings) {
  Duration limit = policy.chunk_time.count() <= 0
                       ? Duration{kFixedChunkTimeLimit}
                       : std::max(2 * policy.chunk_time, Duration{kMinChunkTimeLimit});
  for (unsigned i = 0; i < doublings && limit < kMaxChunkTimeLimit; ++i) limit *= 2;
  return std::min(limit, Duration{kMaxChunkTimeLimit});
}

Duration learn_discard_time(Duration previous, Duration discard_time, std::uint64_t discards) {
  if (discards < kMinDiscardsToLearn || discard_time <= Duration{0}) return previous;
  const Duration sample{discard_time.count() / static_cast<Duration::rep>(discards)};
  if (sample <= Duration{0}) return previous;
  return previous <= Duration{0} ? sample : (previous + sample) / 2;
}

// Exponentially weighted: quick to follow a device that slows down.
double learn_rate(double previous, const TrimRange& range, Duration elapsed) {
  if (range.len >= kUnboundedRange || elapsed < std::chrono::milliseconds{1}) return previous;
  const double sample =
      static_cast<double>(range.len) / std::chrono::duration<double>(elapsed).count();
  return previous <= 0 ? sample : 0.5 * previous + 0.5 * sample;
}

}  // namespace trimd
