// Value types every layer may use: the range one FITRIM call covers, a byte
// extent, and what is known of a filesystem's layout. They live here, not in
// the planner, so that the probes and the trimmer need not depend on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trimd {

struct TrimRange {
  std::uint64_t start = 0;
  std::uint64_t len = 0;
  std::uint64_t minlen = 0;
};

// A byte range [start, start + len).
struct Extent {
  std::uint64_t start = 0;
  std::uint64_t len = 0;
  friend bool operator==(const Extent&, const Extent&) = default;
};

// What the planner needs to know about one filesystem.
struct FsGeometry {
  std::string fs_type;           // ext4, xfs, btrfs, anything else
  std::uint64_t size_bytes = 0;  // device size: the end of the range on ext4/xfs
  // xfs allocation group or ext4 block group size; 0 = unknown.
  std::uint64_t group_bytes = 0;
  // btrfs block groups (data, metadata and system) in its logical address
  // space: sorted by start, non-overlapping, none empty. Empty = unknown.
  std::vector<Extent> block_groups{};
  // Where group 0 begins: ext4 with 1 KiB blocks counts its groups from
  // block 1, so its group boundaries sit 1 KiB past multiples of the size.
  std::uint64_t group_origin = 0;
};

}  // namespace trimd
