// How long a chunk should be: a FITRIM call cannot be interrupted, so its
// length is chosen from how fast the last calls went (the policy's chunk_time).
#pragma once

#include <cstdint>

#include "config.hpp"
#include "planner.hpp"
#include "time.hpp"

namespace trimd {

// The length to ask the planner for: the policy's chunk (or gentle chunk)
// size, capped by what `range_bytes_per_sec` says fits in chunk_time. The
// planner rounds it to whole groups where the filesystem needs that.
// It also grows at most chunk_growth(per_discard)-fold from `previous_len`
// (the last chunk's length, 0 = none): FITRIM's cost follows the free
// extents in the range, not its length, and a chunk over little free space
// would otherwise predict a chunk far too long for the next, busier part of
// the filesystem (measured: 128 MiB in 0.1 s, then 1 GiB in 9 s).
std::uint64_t chunk_length(const TrimPolicy& policy, bool gentle, double range_bytes_per_sec,
                           std::uint64_t previous_len = 0, Duration per_discard = Duration{0});

// How many times the last chunk's length the next may be: twice where one
// discard takes kSlowDiscardTime or longer (a SATA SSD's non-queued TRIM,
// the bench's exclusive and queued models) or its time is unknown; on a
// device whose discards are cheaper, twice as many times more as they are
// (whole times: 2 for anything slower than half kSlowDiscardTime, so that
// the slow device's measurement noise changes nothing), up to
// kMaxChunkGrowth. A chunk whose range holds more free
// extents than the last one's predicted then costs about what it would
// have cost on the slow device, while a fast device (a thin pool) reaches
// chunks of chunk_time in one or two steps instead of five.
double chunk_growth(Duration per_discard);
constexpr Duration kSlowDiscardTime = std::chrono::milliseconds{2};
constexpr double kMaxChunkGrowth = 16;

// The mean time of one discard after a chunk whose `discards` took
// `discard_time` together (each one's own time, those in flight at once
// each counted: a queued device's discards side by side are no cheaper;
// exponentially weighted; 0 = nothing learned yet). A chunk of fewer than
// kMinDiscardsToLearn discards teaches nothing: one large extent's cost is
// its size, not the device's per-discard time.
Duration learn_discard_time(Duration previous, Duration discard_time, std::uint64_t discards);
constexpr std::uint64_t kMinDiscardsToLearn = 16;

// The length cap for a chunk preempted again and again: half the last try,
// never below kMinShrunkChunkBytes. The planner rounds it up to whole ext4 or
// btrfs block groups, and keeps xfs chunks inside one allocation group.
std::uint64_t shrunk_after_preemption(std::uint64_t preempted_len);
constexpr std::uint64_t kMinShrunkChunkBytes = 16ull << 20;

// How long one chunk may hold the filesystem (its mount point is open and
// umount says "target is busy" meanwhile): twice chunk_time, at least
// kMinChunkTimeLimit; kFixedChunkTimeLimit when chunks are not sized by time.
// A chunk still in the kernel then is killed and retried smaller, if it
// pins the mount or has met foreground I/O (chunk_deadline.hpp). A chunk
// that cannot be made smaller (one ext4 or btrfs block group is the least
// the planner hands out) is retried with the limit doubled `doublings`
// times, never above kMaxChunkTimeLimit: a block group dense with small
// free extents on a slow device must still finish (measured: one 128 MiB
// ext4 group took over 4 s at 2 ms per discard), and every kill still
// leaves a umount its moment.
Duration chunk_time_limit(const TrimPolicy& policy, unsigned doublings = 0);
constexpr Duration kMinChunkTimeLimit = std::chrono::seconds{1};
constexpr Duration kFixedChunkTimeLimit = std::chrono::seconds{10};
constexpr Duration kMaxChunkTimeLimit = std::chrono::minutes{10};

// The range-per-second estimate after a call over `range` that took
// `elapsed` (exponentially weighted; 0 = nothing learned yet).
double learn_rate(double previous, const TrimRange& range, Duration elapsed);

}  // namespace trimd
