#include "planner.hpp"

#include "fs_probe.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <ostream>
#include <vector>

namespace trimd {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

FsGeometry ext4(std::uint64_t size) { return {"ext4", size, 0}; }
FsGeometry xfs(std::uint64_t size, std::uint64_t ag) { return {"xfs", size, ag}; }
FsGeometry btrfs(std::uint64_t size) { return {"btrfs", size, 0}; }
FsGeometry btrfs(std::uint64_t size, std::vector<Extent> groups) {
  return {"btrfs", size, 0, std::move(groups)};
}

// What a fresh 512 MiB mkfs.btrfs holds (btrfs-progs 6.2: data, system,
// metadata), then data groups a kernel allocates as files are written.
const std::vector<Extent> kFreshBtrfsGroups = {
    {13631488, 8 * kMiB}, {22020096, 8 * kMiB}, {30408704, 32 * kMiB}};
const std::vector<Extent> kGrownBtrfsGroups = {{13631488, 8 * kMiB},
                                               {22020096, 8 * kMiB},
                                               {30408704, 32 * kMiB},
                                               {63963136, 51 * kMiB},
                                               {63963136 + 51 * kMiB, 51 * kMiB},
                                               {63963136 + 102 * kMiB, 51 * kMiB}};
// The same after a balance: groups removed, new ones far above the old ones.
const std::vector<Extent> kBalancedBtrfsGroups = {{22020096, 8 * kMiB},
                                                  {2048 * kMiB, 256 * kMiB},
                                                  {2304 * kMiB, 256 * kMiB},
                                                  {4096 * kMiB, 32 * kMiB},
                                                  {8192 * kMiB, 1024 * kMiB}};

std::uint64_t end_of(const TrimRange& r) { return r.start + r.len; }

// Every chunk of a pass from `cursor`, advancing the cursor like the manager does.
std::vector<TrimRange> chunks_from(const FsGeometry& g, std::uint64_t cursor,
                                   std::uint64_t chunk_bytes, std::uint64_t minlen = 0) {
  std::vector<TrimRange> chunks;
  while (auto chunk = next_chunk(g, cursor, chunk_bytes, minlen)) {
    EXPECT_GT(chunk->len, 0u) << "empty chunk at " << cursor;
    if (chunk->len == 0 || chunks.size() > 100'000) break;  // a bug, not an endless test
    chunks.push_back(*chunk);
    cursor = end_of(*chunk);
  }
  return chunks;
}

bool same_chunks(const std::vector<TrimRange>& a, const std::vector<TrimRange>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].start != b[i].start || a[i].len != b[i].len || a[i].minlen != b[i].minlen)
      return false;
  return true;
}

struct PassCase {
  const char* label;
  FsGeometry geometry;
  std::uint64_t chunk_bytes;
  std::uint64_t first_start = 0;  // btrfs: the first block group
};

std::ostream& operator<<(std::ostream& os, const PassCase& c) { return os << c.label; }

class EveryRangeKind : public ::testing::TestWithParam<PassCase> {};

TEST_P(EveryRangeKind, ChunksTileThePassWithoutGapOrOverlap) {
  const PassCase& c = GetParam();
  const auto chunks = chunks_from(c.geometry, 0, c.chunk_bytes);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(chunks.front().start, c.first_start);
  for (std::size_t i = 1; i < chunks.size(); ++i)
    EXPECT_EQ(chunks[i].start, end_of(chunks[i - 1])) << "chunk " << i;
  EXPECT_EQ(end_of(chunks.back()), pass_end(c.geometry));
}

TEST_P(EveryRangeKind, ResumingFromAnyChunkBoundaryGivesTheRemainingChunks) {
  const PassCase& c = GetParam();
  const auto whole_pass = chunks_from(c.geometry, 0, c.chunk_bytes);
  for (std::size_t i = 0; i < whole_pass.size(); ++i) {
    const std::vector<TrimRange> rest(whole_pass.begin() + static_cast<std::ptrdiff_t>(i),
                                      whole_pass.end());
    EXPECT_TRUE(same_chunks(chunks_from(c.geometry, whole_pass[i].start, c.chunk_bytes), rest))
        << "resumed at chunk " << i;
  }
}

TEST_P(EveryRangeKind, ProgressRisesToOneOnlyWhenThePassIsComplete) {
  const PassCase& c = GetParam();
  double last = -1.0;
  for (const TrimRange& chunk : chunks_from(c.geometry, 0, c.chunk_bytes)) {
    const double progress = pass_progress(c.geometry, chunk.start);
    EXPECT_GE(progress, last);
    EXPECT_GE(progress, 0.0);
    EXPECT_LT(progress, 1.0);
    last = progress;
  }
  EXPECT_EQ(pass_progress(c.geometry, pass_end(c.geometry)), 1.0);
}

TEST_P(EveryRangeKind, PassesMinlenThrough) {
  const PassCase& c = GetParam();
  for (const TrimRange& chunk : chunks_from(c.geometry, 0, c.chunk_bytes, 64 * 1024))
    EXPECT_EQ(chunk.minlen, 64u * 1024);
}

INSTANTIATE_TEST_SUITE_P(
    Planner, EveryRangeKind,
    ::testing::Values(
        PassCase{"ext4_uneven_tail", ext4(1000 * kMiB + 512), 64 * kMiB},
        PassCase{"ext4_one_chunk", ext4(1000 * kMiB), 0},
        PassCase{"ext4_chunk_larger_than_fs", ext4(10 * kMiB), 64 * kMiB},
        PassCase{"xfs_chunk_splits_ags", xfs(1000 * kMiB, 250 * kMiB), 100 * kMiB},
        PassCase{"xfs_chunk_spans_ags", xfs(1000 * kMiB, 100 * kMiB), 250 * kMiB},
        PassCase{"xfs_short_last_ag", xfs(1030 * kMiB, 256 * kMiB), 512 * kMiB},
        PassCase{"xfs_chunk_equals_ag", xfs(1024 * kMiB, 256 * kMiB), 256 * kMiB},
        PassCase{"xfs_one_chunk", xfs(1024 * kMiB, 256 * kMiB), 0},
        PassCase{"xfs_unknown_ags", xfs(1000 * kMiB, 0), 300 * kMiB},
        PassCase{"btrfs_fresh", btrfs(512 * kMiB, kFreshBtrfsGroups), 16 * kMiB, 13631488},
        PassCase{"btrfs_grown", btrfs(512 * kMiB, kGrownBtrfsGroups), 64 * kMiB, 13631488},
        PassCase{"btrfs_one_chunk", btrfs(512 * kMiB, kGrownBtrfsGroups), 0, 13631488},
        PassCase{"btrfs_without_block_groups", btrfs(1000 * kMiB), 128 * kMiB},
        PassCase{"unknown_fs", FsGeometry{"zonefs", 1000 * kMiB, 0}, 64 * kMiB},
        PassCase{"unknown_size", ext4(0), 64 * kMiB}),
    [](const auto& test_info) { return std::string(test_info.param.label); });

TEST(Planner, ChoosesTheRangeKindByFilesystemType) {
  EXPECT_EQ(range_kind_for(ext4(kMiB)), RangeKind::Linear);
  EXPECT_EQ(range_kind_for(FsGeometry{"vfat", kMiB, 0}), RangeKind::Linear);
  EXPECT_EQ(range_kind_for(xfs(kMiB, kMiB / 4)), RangeKind::GroupAligned);
  EXPECT_EQ(range_kind_for(xfs(kMiB, 0)), RangeKind::Linear);
  EXPECT_EQ(range_kind_for(btrfs(kMiB, kFreshBtrfsGroups)), RangeKind::LogicalSpace);
  EXPECT_EQ(range_kind_for(btrfs(0, kFreshBtrfsGroups)), RangeKind::LogicalSpace);
  EXPECT_EQ(range_kind_for(btrfs(kMiB)), RangeKind::WholeRange);
  EXPECT_EQ(range_kind_for(FsGeometry{"zonefs", kMiB, 0}), RangeKind::WholeRange);
  EXPECT_EQ(range_kind_for(ext4(0)), RangeKind::WholeRange);
  EXPECT_EQ(range_kind_for(btrfs(0)), RangeKind::WholeRange);
}

TEST(Planner, CutsLinearChunksAtTheRequestedLengthAndTheDeviceEnd) {
  const auto chunks = chunks_from(ext4(100 * kMiB), 0, 30 * kMiB);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[0].len, 30 * kMiB);
  EXPECT_EQ(chunks[3].start, 90 * kMiB);
  EXPECT_EQ(chunks[3].len, 10 * kMiB);
}

TEST(Planner, NeverLetsAnXfsChunkCrossAnAllocationGroupBoundary) {
  const std::uint64_t ag = 256 * kMiB;
  for (const std::uint64_t chunk_bytes : {100 * kMiB, 300 * kMiB, 700 * kMiB}) {
    for (const TrimRange& chunk : chunks_from(xfs(1030 * kMiB, ag), 0, chunk_bytes)) {
      const bool inside_one_ag = chunk.start / ag == (end_of(chunk) - 1) / ag;
      const bool whole_ags =
          chunk.start % ag == 0 && (end_of(chunk) % ag == 0 || end_of(chunk) == 1030 * kMiB);
      EXPECT_TRUE(inside_one_ag || whole_ags)
          << "chunk " << chunk.start << "+" << chunk.len << " for " << chunk_bytes;
    }
  }
}

TEST(Planner, NeverLetsAnXfsChunkSpanMoreThanOneAllocationGroup) {
  // A range over several AGs leaves small free extents untrimmed (6.18).
  const auto chunks = chunks_from(xfs(1000 * kMiB, 100 * kMiB), 0, 250 * kMiB);
  ASSERT_EQ(chunks.size(), 10u);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].start, i * 100 * kMiB);
    EXPECT_EQ(chunks[i].len, 100 * kMiB);
  }
}

TEST(Planner, SubdividesAnXfsAllocationGroupForASmallChunk) {
  const auto chunks = chunks_from(xfs(500 * kMiB, 250 * kMiB), 0, 100 * kMiB);
  ASSERT_EQ(chunks.size(), 6u);
  EXPECT_EQ(chunks[2].start, 200 * kMiB);
  EXPECT_EQ(chunks[2].len, 50 * kMiB);  // the rest of the first AG
  EXPECT_EQ(chunks[3].start, 250 * kMiB);
}

TEST(Planner, FinishesTheCurrentAllocationGroupWhenResumedMidGroup) {
  const auto chunk = next_chunk(xfs(1000 * kMiB, 100 * kMiB), 130 * kMiB, 300 * kMiB, 0);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(chunk->start, 130 * kMiB);
  EXPECT_EQ(end_of(*chunk), 200 * kMiB);
  const auto after = next_chunk(xfs(1000 * kMiB, 100 * kMiB), end_of(*chunk), 300 * kMiB, 0);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->len, 100 * kMiB);
}

TEST(Planner, TrimsAnUnknownFilesystemInOneWholeRangeCall) {
  const auto chunks = chunks_from(FsGeometry{"zonefs", 1000 * kMiB, 0}, 0, 64 * kMiB, 4096);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].start, 0u);
  EXPECT_EQ(chunks[0].len, kMax);
  EXPECT_EQ(chunks[0].minlen, 4096u);
}

TEST(Planner, ReturnsNothingOnceTheCursorReachesThePassEnd) {
  EXPECT_FALSE(next_chunk(ext4(kMiB), kMiB, 0, 0).has_value());
  EXPECT_FALSE(next_chunk(ext4(kMiB), 2 * kMiB, 0, 0).has_value());
  EXPECT_FALSE(next_chunk(xfs(kMiB, kMiB / 4), kMiB, 0, 0).has_value());
  EXPECT_FALSE(next_chunk(btrfs(kMiB), kMax, 0, 0).has_value());
  EXPECT_TRUE(next_chunk(btrfs(kMiB), kMiB, 0, 0).has_value());
}

TEST(Planner, DoesNotOverflowNearTheTopOfTheRange) {
  const FsGeometry huge = ext4(kMax - 100);
  const auto chunk = next_chunk(huge, kMax - 150, kMax, 0);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(end_of(*chunk), kMax - 100);

  const auto ag_chunk = next_chunk(xfs(kMax - 100, kMax / 4), kMax / 2 + 7, kMax, 0);
  ASSERT_TRUE(ag_chunk.has_value());
  EXPECT_GT(end_of(*ag_chunk), ag_chunk->start);
  EXPECT_LE(end_of(*ag_chunk), kMax - 100);

  const auto whole_ags = next_chunk(xfs(kMax - 100, kMiB), 0, kMax, 0);
  ASSERT_TRUE(whole_ags.has_value());
  EXPECT_EQ(whole_ags->len % kMiB, 0u);
  EXPECT_LE(end_of(*whole_ags), kMax - 100);
}

TEST(Planner, KeepsProgressBelowOneJustBeforeTheEndOfAHugeRange) {
  EXPECT_LT(pass_progress(ext4(kMax - 1), kMax - 2), 1.0);
  EXPECT_EQ(pass_progress(ext4(kMax - 1), kMax - 1), 1.0);
}

// ---- btrfs: whole block groups -------------------------------------------

// Where a group holding `address` starts, or nothing in a gap.
std::optional<Extent> group_holding(const std::vector<Extent>& groups, std::uint64_t address) {
  for (const Extent& group : groups)
    if (address >= group.start && address - group.start < group.len) return group;
  return std::nullopt;
}

// Every chunk of a btrfs pass starts at a group's start and ends at a group's
// end, so the groups it covers are whole; only the tail, from the last group's
// end, and a chunk of "as large as possible" run to the end of u64.
void expect_whole_groups(const std::vector<Extent>& groups, const std::vector<TrimRange>& chunks) {
  const std::uint64_t last_end = groups.back().start + groups.back().len;
  for (const TrimRange& chunk : chunks) {
    if (end_of(chunk) == kMax && chunk.start == last_end) continue;  // the tail
    const auto first = group_holding(groups, chunk.start);
    ASSERT_TRUE(first.has_value()) << "chunk at " << chunk.start << " starts outside any group";
    EXPECT_EQ(chunk.start, first->start);
    if (end_of(chunk) == kMax) continue;
    const auto last = group_holding(groups, end_of(chunk) - 1);
    ASSERT_TRUE(last.has_value()) << "chunk ending at " << end_of(chunk);
    EXPECT_EQ(end_of(chunk), last->start + last->len);
  }
}

TEST(BtrfsPlanner, CutsChunksOnlyAtBlockGroupBoundaries) {
  for (const auto* groups : {&kFreshBtrfsGroups, &kGrownBtrfsGroups, &kBalancedBtrfsGroups})
    for (const std::uint64_t chunk_bytes : {kMiB, 16 * kMiB, 64 * kMiB, 300 * kMiB, 0 * kMiB}) {
      SCOPED_TRACE(chunk_bytes);
      const auto chunks = chunks_from(btrfs(512 * kMiB, *groups), 0, chunk_bytes);
      ASSERT_FALSE(chunks.empty());
      expect_whole_groups(*groups, chunks);
      EXPECT_EQ(end_of(chunks.back()), kMax);
    }
}

TEST(BtrfsPlanner, GroupsConsecutiveBlockGroupsUpToTheChunkLength) {
  const auto chunks = chunks_from(btrfs(512 * kMiB, kGrownBtrfsGroups), 0, 64 * kMiB);
  ASSERT_EQ(chunks.size(), 5u);
  EXPECT_EQ(chunks[0].start, 13631488u);
  EXPECT_EQ(chunks[0].len, 48 * kMiB);  // data + system + metadata
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(chunks[i].len, 51 * kMiB) << "chunk " << i;
}

TEST(BtrfsPlanner, NeverSplitsABlockGroupLargerThanTheChunk) {
  const auto chunks = chunks_from(btrfs(512 * kMiB, kBalancedBtrfsGroups), 0, 64 * kMiB);
  ASSERT_EQ(chunks.size(), 6u);
  EXPECT_EQ(chunks[4].start, 8192 * kMiB);
  EXPECT_EQ(chunks[4].len, 1024 * kMiB);
}

TEST(BtrfsPlanner, SkipsTheUnallocatedGapsBetweenBlockGroups) {
  const auto chunks = chunks_from(btrfs(512 * kMiB, kBalancedBtrfsGroups), 0, 1024 * kMiB);
  ASSERT_EQ(chunks.size(), 5u);
  EXPECT_EQ(chunks[0].start, 22020096u);
  EXPECT_EQ(chunks[0].len, 8 * kMiB);
  EXPECT_EQ(chunks[1].start, 2048 * kMiB);
  EXPECT_EQ(chunks[1].len, 512 * kMiB);  // the two neighbours, not the gap after them
  EXPECT_EQ(chunks[2].start, 4096 * kMiB);
}

TEST(BtrfsPlanner, EndsThePassWithOneChunkFromTheLastGroupToTheEndOfU64) {
  const auto chunks = chunks_from(btrfs(512 * kMiB, kGrownBtrfsGroups), 0, 64 * kMiB);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(chunks.back().start, 63963136 + 153 * kMiB);
  EXPECT_EQ(end_of(chunks.back()), kMax);
}

TEST(BtrfsPlanner, GoesBackToTheStartOfTheBlockGroupACursorIsInside) {
  const FsGeometry g = btrfs(512 * kMiB, kGrownBtrfsGroups);
  const auto chunk = next_chunk(g, 64 * kMiB, 64 * kMiB, 0);  // the old layout's boundary
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(chunk->start, 63963136u);
  EXPECT_EQ(chunk->len, 51 * kMiB);
}

TEST(BtrfsPlanner, GoesOnAtTheNextBlockGroupFromACursorInAGap) {
  const FsGeometry g = btrfs(512 * kMiB, kBalancedBtrfsGroups);
  const auto chunk = next_chunk(g, 1024 * kMiB, 64 * kMiB, 0);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(chunk->start, 2048 * kMiB);
  EXPECT_EQ(chunk->len, 256 * kMiB);
}

TEST(BtrfsPlanner, TrimsTheTailFromACursorPastTheLastBlockGroup) {
  const FsGeometry g = btrfs(512 * kMiB, kFreshBtrfsGroups);  // groups removed since
  const auto chunk = next_chunk(g, 1024 * kMiB, 64 * kMiB, 0);
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ(chunk->start, 63963136u);
  EXPECT_EQ(end_of(*chunk), kMax);
}

// A cursor persisted by any layout ends the pass: every chunk ends past the
// cursor it was asked for, and the groups from the cursor's on are all covered.
TEST(BtrfsPlanner, FinishesAPassResumedFromAnyCursor) {
  const FsGeometry g = btrfs(512 * kMiB, kBalancedBtrfsGroups);
  std::vector<std::uint64_t> cursors = {0, 1, kMax - 1, 5000 * kMiB, 20000 * kMiB};
  for (const Extent& group : kBalancedBtrfsGroups)
    cursors.insert(cursors.end(), {group.start - 1, group.start, group.start + group.len / 2,
                                   group.start + group.len - 1, group.start + group.len});
  for (const std::uint64_t cursor : cursors) {
    SCOPED_TRACE(cursor);
    const auto first = next_chunk(g, cursor, 64 * kMiB, 0);
    ASSERT_TRUE(first.has_value());
    EXPECT_GT(end_of(*first), cursor);
    const auto chunks = chunks_from(g, cursor, 64 * kMiB);
    ASSERT_FALSE(chunks.empty());
    EXPECT_EQ(end_of(chunks.back()), kMax);
    for (const Extent& group : kBalancedBtrfsGroups) {
      if (group.start + group.len <= cursor) continue;
      const bool covered = std::any_of(chunks.begin(), chunks.end(), [&](const TrimRange& c) {
        return c.start <= group.start && end_of(c) >= group.start + group.len;
      });
      EXPECT_TRUE(covered) << "group at " << group.start;
    }
  }
}

TEST(BtrfsPlanner, TrimsInOneWholeRangeCallWithoutBlockGroups) {
  for (const std::uint64_t cursor : {std::uint64_t{0}, 512 * kMiB, 5000 * kMiB}) {
    const auto chunk = next_chunk(btrfs(1000 * kMiB), cursor, 64 * kMiB, 4096);
    ASSERT_TRUE(chunk.has_value());
    EXPECT_EQ(chunk->start, 0u) << "resumed at " << cursor;
    EXPECT_EQ(chunk->len, kMax);
    EXPECT_EQ(chunk->minlen, 4096u);
  }
  EXPECT_FALSE(next_chunk(btrfs(1000 * kMiB), kMax, 64 * kMiB, 0).has_value());
}

TEST(BtrfsPlanner, DoesNotOverflowWithABlockGroupAtTheTopOfTheAddressSpace) {
  const FsGeometry g = btrfs(512 * kMiB, {{kMiB, kMiB}, {kMax - 64 * kMiB, 64 * kMiB}});
  const auto chunks = chunks_from(g, 0, 32 * kMiB);
  ASSERT_EQ(chunks.size(), 2u);  // the last group reaches the end: no tail
  EXPECT_EQ(chunks[1].start, kMax - 64 * kMiB);
  EXPECT_EQ(end_of(chunks[1]), kMax);
  EXPECT_FALSE(next_chunk(g, kMax, 32 * kMiB, 0).has_value());
}

TEST(BtrfsPlanner, MeasuresProgressInBlockGroupBytes) {
  const FsGeometry g = btrfs(512 * kMiB, kBalancedBtrfsGroups);  // 1576 MiB in groups
  EXPECT_EQ(pass_progress(g, 0), 0.0);
  EXPECT_DOUBLE_EQ(pass_progress(g, 2048 * kMiB), 8.0 / 1576);  // the gap counts nothing
  EXPECT_DOUBLE_EQ(pass_progress(g, 2304 * kMiB), 264.0 / 1576);
  EXPECT_DOUBLE_EQ(pass_progress(g, 8192 * kMiB), 552.0 / 1576);
  EXPECT_DOUBLE_EQ(pass_progress(g, 8704 * kMiB), 1064.0 / 1576);
}

TEST(BtrfsPlanner, CapsProgressUntilTheTailChunkIsDone) {
  const FsGeometry g = btrfs(512 * kMiB, kGrownBtrfsGroups);
  const std::uint64_t last_end = 63963136 + 153 * kMiB;
  EXPECT_LE(pass_progress(g, last_end - 1), 0.99);
  EXPECT_LE(pass_progress(g, last_end), 0.99);
  EXPECT_GT(pass_progress(g, last_end), 0.9);
  EXPECT_LT(pass_progress(g, kMax - 1), 1.0);
  EXPECT_EQ(pass_progress(g, kMax), 1.0);
}

TEST(Ext4Planner, ChunksCoverWholeBlockGroupsEvenWhenAskedForLess) {
  const std::uint64_t group = ext4_block_group_bytes(4096);
  ASSERT_EQ(group, 128ull << 20);
  FsGeometry geometry{"ext4", 4 * group + group / 2, group};
  EXPECT_EQ(range_kind_for(geometry), RangeKind::GroupAligned);
  std::uint64_t cursor = 0;
  std::vector<TrimRange> chunks;
  while (auto chunk = next_chunk(geometry, cursor, 8ull << 20, 0)) {
    chunks.push_back(*chunk);
    cursor = chunk->start + chunk->len;
  }
  ASSERT_EQ(chunks.size(), 5u);
  for (std::size_t i = 0; i < chunks.size(); ++i) EXPECT_EQ(chunks[i].start, i * group);
  EXPECT_EQ(chunks.back().len, group / 2);
}

TEST(Ext4Planner, ChunksOfOneKibibyteBlocksEndWhereGroupsEndAtBlockOnePlusMultiples) {
  // mkfs.ext4 -b 1024 -g 8192: group g spans [1 KiB + g * 8 MiB, ...).
  const std::uint64_t group = 8 * kMiB;
  FsGeometry geometry{"ext4", 64 * kMiB, group};
  geometry.group_origin = 1024;
  std::uint64_t cursor = 0;
  std::vector<TrimRange> chunks;
  while (auto chunk = next_chunk(geometry, cursor, 2 * group, 0)) {
    chunks.push_back(*chunk);
    cursor = chunk->start + chunk->len;
  }
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[0].start, 0u);  // the boot block goes with group 0
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i)
    EXPECT_EQ(chunks[i].start + chunks[i].len, 1024 + (i + 1) * 2 * group) << "chunk " << i;
  EXPECT_EQ(chunks.back().start + chunks.back().len, 64 * kMiB);
}

TEST(Ext4Planner, ACursorLeftAtAPlainMultipleFinishesItsGroupFirst) {
  // A cursor saved before group_origin was known: one short chunk to realign.
  FsGeometry geometry{"ext4", 64 * kMiB, 8 * kMiB};
  geometry.group_origin = 1024;
  const auto chunk = next_chunk(geometry, 16 * kMiB, 16 * kMiB, 0);
  ASSERT_TRUE(chunk);
  EXPECT_EQ(chunk->start + chunk->len, 16 * kMiB + 1024);
}

TEST(Ext4Planner, LargerChunksGroupWholeBlockGroups) {
  const std::uint64_t group = 128ull << 20;
  FsGeometry geometry{"ext4", 8 * group, group};
  auto chunk = next_chunk(geometry, 0, 3 * group + 1, 0);
  ASSERT_TRUE(chunk);
  EXPECT_EQ(chunk->len, 3 * group);
}

TEST(Ext4Planner, WithoutAGroupSizeChunksAreLinear) {
  FsGeometry geometry{"ext4", 1ull << 30, 0};
  EXPECT_EQ(range_kind_for(geometry), RangeKind::Linear);
}

// F7: a cursor read from a state file may not belong to this filesystem.
TEST(SavedCursor, FitsALinearOrGroupedPassUpToItsEnd) {
  const FsGeometry ext4{"ext4", 1000 * kMiB, 128 * kMiB};
  EXPECT_TRUE(cursor_in_range(ext4, 0));
  EXPECT_TRUE(cursor_in_range(ext4, 1000 * kMiB));
  EXPECT_FALSE(cursor_in_range(ext4, 1000 * kMiB + 1));
  EXPECT_FALSE(cursor_in_range(FsGeometry{"vfat", kMiB, 0}, 9223372036854775807ull));
}

TEST(SavedCursor, FitsABtrfsPassUpToTheEndOfItsLastBlockGroup) {
  FsGeometry btrfs{"btrfs", 1000 * kMiB, 0};
  btrfs.block_groups = {{kMiB, 8 * kMiB}, {64 * kMiB, 256 * kMiB}};
  EXPECT_TRUE(cursor_in_range(btrfs, 320 * kMiB));
  EXPECT_FALSE(cursor_in_range(btrfs, 320 * kMiB + 1));
}

TEST(SavedCursor, FitsAWholeRangePassWhateverItIsBecauseThatStartsAtZero) {
  EXPECT_TRUE(cursor_in_range(FsGeometry{"zonefs", kMiB, 0}, kMax));
}

}  // namespace
}  // namespace trimd
