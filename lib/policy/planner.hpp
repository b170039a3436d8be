// A trim pass is a cursor over a filesystem's FITRIM address range, advanced
// one chunk at a time. The planner says what the next chunk is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fs_types.hpp"

namespace trimd {

enum class RangeKind {
  Linear,        // ext4 and similar: [0, size) in chunks
  GroupAligned,  // xfs: within one allocation group; ext4: whole block groups
  LogicalSpace,  // btrfs with known block groups: whole groups per chunk, then
                 // one chunk from the last group's end to the end of u64
  WholeRange,    // unknown filesystem or btrfs layout: one call {0, UINT64_MAX}
};

RangeKind range_kind_for(const FsGeometry& geometry);

// The exclusive end of the pass (UINT64_MAX for btrfs and unknown types).
std::uint64_t pass_end(const FsGeometry& geometry);

// The chunk that starts at `cursor`, or nothing when the pass is complete.
// `chunk_bytes` is the wanted length (0 = as large as possible). The chunk
// always ends past `cursor`; it may start before it where trimming from
// `cursor` would miss space (a cursor inside a btrfs block group gets the
// whole group; a whole-range call always starts at 0).
std::optional<TrimRange> next_chunk(const FsGeometry& geometry, std::uint64_t cursor,
                                    std::uint64_t chunk_bytes, std::uint64_t minlen);

// Whether a saved cursor can belong to a pass over this filesystem: not past
// its end (ext4, xfs and the like) or past its last block group (btrfs). A
// cursor beyond (a corrupt state file, a filesystem shrunk since) means the
// pass starts again from 0.
bool cursor_in_range(const FsGeometry& geometry, std::uint64_t cursor);

// 0..1; below 1 until the pass is complete.
double pass_progress(const FsGeometry& geometry, std::uint64_t cursor);

}  // namespace trimd
