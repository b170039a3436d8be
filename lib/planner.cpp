// The trim planner: which chunk comes next in a pass, per filesystem type.
// Every function is pure, so a pass can resume from a persisted cursor and
// get exactly the chunks an uninterrupted pass would have had.
#include "planner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

namespace trimd {
namespace {

constexpr std::uint64_t kRangeMax = std::numeric_limits<std::uint64_t>::max();

// btrfs's tail chunk runs far past the device size: progress by device size
// alone would say "done" long before the pass is.
constexpr double kLogicalSpaceProgressCap = 0.99;

// Filesystems whose FITRIM range is a plain byte range over [0, device size).
constexpr std::array<std::string_view, 11> kLinearFsTypes = {
    "ext2", "ext3", "ext4", "f2fs", "vfat", "exfat", "ntfs3", "jfs", "gfs2", "ocfs2", "nilfs2"};

bool is_linear_fs_type(std::string_view fs_type) {
  return std::find(kLinearFsTypes.begin(), kLinearFsTypes.end(), fs_type) != kLinearFsTypes.end();
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return b > kRangeMax - a ? kRangeMax : a + b;
}

TrimRange make_range(std::uint64_t start, std::uint64_t end, std::uint64_t minlen) {
  return TrimRange{start, end - start, minlen};
}

// [cursor, min(cursor + chunk, end)); chunk 0 = all the way to `end`.
std::uint64_t linear_chunk_end(std::uint64_t cursor, std::uint64_t chunk_bytes,
                               std::uint64_t end) {
  if (chunk_bytes == 0) return end;
  return std::min(saturating_add(cursor, chunk_bytes), end);
}

// Chunk ends sit on allocation-group boundaries, so xfs never walks the
// free-space tree of one AG twice for two neighbouring chunks.
std::uint64_t ag_aligned_chunk_end(std::uint64_t cursor, std::uint64_t chunk_bytes,
                                   std::uint64_t ag_bytes, std::uint64_t end) {
  if (chunk_bytes == 0) return end;
  const std::uint64_t offset_in_ag = cursor % ag_bytes;
  const std::uint64_t ag_end = std::min(saturating_add(cursor - offset_in_ag, ag_bytes), end);
  if (chunk_bytes < ag_bytes) return std::min(saturating_add(cursor, chunk_bytes), ag_end);
  if (offset_in_ag != 0) return ag_end;  // finish the AG we are in first
  const std::uint64_t whole_ags = chunk_bytes / ag_bytes;
  const std::uint64_t span = whole_ags > kRangeMax / ag_bytes ? kRangeMax : whole_ags * ag_bytes;
  return std::min(saturating_add(cursor, span), end);
}

// [0, size) like ext4, then one chunk over the rest of btrfs's logical space.
std::uint64_t logical_space_chunk_end(std::uint64_t cursor, std::uint64_t chunk_bytes,
                                      std::uint64_t size) {
  if (cursor >= size || chunk_bytes == 0) return kRangeMax;
  return linear_chunk_end(cursor, chunk_bytes, size);
}

double fraction(std::uint64_t done, std::uint64_t total) {
  return static_cast<double>(done) / static_cast<double>(total);
}

}  // namespace

RangeKind range_kind_for(const FsGeometry& geometry) {
  if (geometry.size_bytes == 0) return RangeKind::WholeRange;
  if (geometry.fs_type == "btrfs") return RangeKind::LogicalSpace;
  if (geometry.fs_type == "xfs")
    return geometry.xfs_ag_bytes != 0 ? RangeKind::AgAligned : RangeKind::Linear;
  if (is_linear_fs_type(geometry.fs_type)) return RangeKind::Linear;
  return RangeKind::WholeRange;
}

std::uint64_t pass_end(const FsGeometry& geometry) {
  switch (range_kind_for(geometry)) {
    case RangeKind::Linear:
    case RangeKind::AgAligned:
      return geometry.size_bytes;
    case RangeKind::LogicalSpace:
    case RangeKind::WholeRange:
      break;
  }
  return kRangeMax;
}

std::optional<TrimRange> next_chunk(const FsGeometry& geometry, std::uint64_t cursor,
                                    std::uint64_t chunk_bytes, std::uint64_t minlen) {
  const std::uint64_t end = pass_end(geometry);
  if (cursor >= end) return std::nullopt;
  switch (range_kind_for(geometry)) {
    case RangeKind::Linear:
      return make_range(cursor, linear_chunk_end(cursor, chunk_bytes, end), minlen);
    case RangeKind::AgAligned:
      return make_range(
          cursor, ag_aligned_chunk_end(cursor, chunk_bytes, geometry.xfs_ag_bytes, end), minlen);
    case RangeKind::LogicalSpace:
      return make_range(cursor, logical_space_chunk_end(cursor, chunk_bytes, geometry.size_bytes),
                        minlen);
    case RangeKind::WholeRange:
      break;
  }
  return make_range(cursor, end, minlen);
}

double pass_progress(const FsGeometry& geometry, std::uint64_t cursor) {
  const std::uint64_t end = pass_end(geometry);
  if (cursor >= end) return 1.0;
  if (range_kind_for(geometry) == RangeKind::LogicalSpace)
    return std::min(fraction(cursor, geometry.size_bytes), kLogicalSpaceProgressCap);
  // Near the end a double rounds cursor/end up to 1: keep "1" for "complete".
  return std::min(fraction(cursor, end), std::nextafter(1.0, 0.0));
}

}  // namespace trimd
