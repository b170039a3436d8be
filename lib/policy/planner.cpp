// The trim planner: which chunk comes next in a pass, per filesystem type.
// Every function is pure, so a pass can resume from a persisted cursor and
// get exactly the chunks an uninterrupted pass would have had.
#include "planner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string_view>

#include "fs_kind.hpp"

namespace trimd {
namespace {

constexpr std::uint64_t kRangeMax = std::numeric_limits<std::uint64_t>::max();

// btrfs's tail chunk comes after the last block group: progress by group
// bytes alone would say "done" before the pass is.
constexpr double kLogicalSpaceProgressCap = 0.99;

// Measured on 6.18, both ways round:
// - ext4 trims every free extent that starts in the range to its end and only
//   marks a group done when the range starts at the group's start and covers
//   its last block (or its last free extent reaches it): a chunk smaller than
//   a group, or one boundary off by ext4's 1 KiB boot block, sends the same
//   discards again at the next pass or fstrim (483 for one fragmented group).
// - xfs clamps free extents to the range, but a range over more than one AG
//   (fstrim's whole-filesystem range, or 1 GiB over 256 MiB AGs) leaves most
//   small free extents untrimmed (30000 freed 8 KiB extents: 305 MiB still
//   allocated vs 188 MiB with one AG per call): xfs chunks are at most one AG.
std::uint64_t group_chunk_bytes(const FsGeometry& geometry, std::uint64_t chunk_bytes) {
  const FsKind kind = fs_kind(geometry.fs_type);
  if (kind == FsKind::Xfs)
    return chunk_bytes == 0 ? geometry.group_bytes : std::min(chunk_bytes, geometry.group_bytes);
  if (chunk_bytes == 0 || !is_ext(kind)) return chunk_bytes;
  return std::max(chunk_bytes, geometry.group_bytes);
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return b > kRangeMax - a ? kRangeMax : a + b;
}

TrimRange make_range(std::uint64_t start, std::uint64_t end, std::uint64_t minlen) {
  return TrimRange{start, end - start, minlen};
}

// [cursor, min(cursor + chunk, end)); chunk 0 = all the way to `end`.
std::uint64_t linear_chunk_end(std::uint64_t cursor, std::uint64_t chunk_bytes, std::uint64_t end) {
  if (chunk_bytes == 0) return end;
  return std::min(saturating_add(cursor, chunk_bytes), end);
}

// Chunk ends sit on group boundaries (`origin` + a multiple of the group
// size), so xfs never walks the free-space tree of one AG twice for two
// neighbouring chunks, and ext4 marks every group a chunk covers as trimmed.
// What lies below group 0 (ext4's 1 KiB boot block) goes with group 0.
std::uint64_t ag_aligned_chunk_end(std::uint64_t cursor, std::uint64_t chunk_bytes,
                                   std::uint64_t ag_bytes, std::uint64_t origin,
                                   std::uint64_t end) {
  if (chunk_bytes == 0) return end;
  const std::uint64_t from = cursor > origin ? cursor - origin : 0;
  const std::uint64_t offset_in_ag = from % ag_bytes;
  const std::uint64_t ag_start = saturating_add(origin, from - offset_in_ag);
  const std::uint64_t ag_end = std::min(saturating_add(ag_start, ag_bytes), end);
  if (chunk_bytes < ag_bytes) return std::min(saturating_add(cursor, chunk_bytes), ag_end);
  if (offset_in_ag != 0) return ag_end;  // finish the AG we are in first
  const std::uint64_t whole_ags = chunk_bytes / ag_bytes;
  const std::uint64_t span = whole_ags > kRangeMax / ag_bytes ? kRangeMax : whole_ags * ag_bytes;
  return std::min(saturating_add(ag_start, span), end);
}

std::uint64_t end_of(const Extent& group) { return saturating_add(group.start, group.len); }

// The block group that holds `cursor`, or else the first one after it.
std::vector<Extent>::const_iterator group_at_or_after(const std::vector<Extent>& groups,
                                                      std::uint64_t cursor) {
  return std::partition_point(groups.begin(), groups.end(),
                              [cursor](const Extent& group) { return end_of(group) <= cursor; });
}

// Whole btrfs block groups, as many consecutive ones as fit in `chunk_bytes`
// and at least one: a FITRIM range that starts inside a block group misses
// most of that group's free space (measured on 6.18), so a cursor inside one
// goes back to its start. After the last group, one chunk to the end of u64
// picks up the groups allocated since the probe.
TrimRange block_group_chunk(const std::vector<Extent>& groups, std::uint64_t cursor,
                            std::uint64_t chunk_bytes, std::uint64_t minlen) {
  const auto first = group_at_or_after(groups, cursor);
  if (first == groups.end()) return make_range(end_of(groups.back()), kRangeMax, minlen);
  const std::uint64_t start = first->start;
  if (chunk_bytes == 0) return make_range(start, kRangeMax, minlen);
  std::uint64_t end = end_of(*first);
  for (auto next = first + 1; next != groups.end() && end_of(*next) - start <= chunk_bytes; ++next)
    end = end_of(*next);
  return make_range(start, end, minlen);
}

double fraction(std::uint64_t done, std::uint64_t total) {
  return static_cast<double>(done) / static_cast<double>(total);
}

// The share of block-group bytes below `cursor`. Sums in double: the bytes of
// a whole u64 address space do not fit in a u64.
double block_group_fraction(const std::vector<Extent>& groups, std::uint64_t cursor) {
  double done = 0;
  double total = 0;
  for (const Extent& group : groups) {
    total += static_cast<double>(group.len);
    if (cursor > group.start)
      done += static_cast<double>(std::min(cursor - group.start, group.len));
  }
  return total > 0 ? done / total : 0.0;
}

}  // namespace

RangeKind range_kind_for(const FsGeometry& geometry) {
  // Chunks that ignore btrfs's block groups miss free space (measured):
  // without them, one whole-range call is correct, just not interruptible.
  const FsKind kind = fs_kind(geometry.fs_type);
  if (kind == FsKind::Btrfs)
    return geometry.block_groups.empty() ? RangeKind::WholeRange : RangeKind::LogicalSpace;
  if (geometry.size_bytes == 0) return RangeKind::WholeRange;
  const bool grouped = kind == FsKind::Xfs || is_ext(kind);
  if (grouped && geometry.group_bytes != 0) return RangeKind::GroupAligned;
  if (grouped || trims_linear_range(kind)) return RangeKind::Linear;
  return RangeKind::WholeRange;
}

std::uint64_t pass_end(const FsGeometry& geometry) {
  switch (range_kind_for(geometry)) {
    case RangeKind::Linear:
    case RangeKind::GroupAligned: return geometry.size_bytes;
    case RangeKind::LogicalSpace:
    case RangeKind::WholeRange: break;
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
    case RangeKind::GroupAligned:
      return make_range(cursor,
                        ag_aligned_chunk_end(cursor, group_chunk_bytes(geometry, chunk_bytes),
                                             geometry.group_bytes, geometry.group_origin, end),
                        minlen);
    case RangeKind::LogicalSpace:
      return block_group_chunk(geometry.block_groups, cursor, chunk_bytes, minlen);
    case RangeKind::WholeRange: break;
  }
  // From 0 whatever the cursor: one left by another layout must not make
  // the single call skip what lies below it.
  return make_range(0, end, minlen);
}

bool cursor_in_range(const FsGeometry& geometry, std::uint64_t cursor) {
  switch (range_kind_for(geometry)) {
    case RangeKind::Linear:
    case RangeKind::GroupAligned: return cursor <= geometry.size_bytes;
    case RangeKind::LogicalSpace: return cursor <= end_of(geometry.block_groups.back());
    case RangeKind::WholeRange: break;
  }
  return true;  // one call from 0 whatever the cursor
}

double pass_progress(const FsGeometry& geometry, std::uint64_t cursor) {
  const std::uint64_t end = pass_end(geometry);
  if (cursor >= end) return 1.0;
  if (range_kind_for(geometry) == RangeKind::LogicalSpace)
    return std::min(block_group_fraction(geometry.block_groups, cursor), kLogicalSpaceProgressCap);
  // Near the end a double rounds cursor/end up to 1: keep "1" for "complete".
  return std::min(fraction(cursor, end), std::nextafter(1.0, 0.0));
}

}  // namespace trimd
