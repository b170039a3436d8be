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
std::uint64_t chunk_length(const TrimPolicy& policy, bool gentle, double range_bytes_per_sec);

// The range-per-second estimate after a call over `range` that took
// `elapsed` (exponentially weighted; 0 = nothing learned yet).
double learn_rate(double previous, const TrimRange& range, Duration elapsed);

}  // namespace trimd
