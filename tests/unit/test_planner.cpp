#include "planner.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <ostream>
#include <vector>

namespace trimd {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

FsGeometry ext4(std::uint64_t size) { return {"ext4", size, 0}; }
FsGeometry xfs(std::uint64_t size, std::uint64_t ag) { return {"xfs", size, ag}; }
FsGeometry btrfs(std::uint64_t size) { return {"btrfs", size, 0}; }

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
};

std::ostream& operator<<(std::ostream& os, const PassCase& c) { return os << c.label; }

class EveryRangeKind : public ::testing::TestWithParam<PassCase> {};

TEST_P(EveryRangeKind, ChunksTileThePassWithoutGapOrOverlap) {
  const PassCase& c = GetParam();
  const auto chunks = chunks_from(c.geometry, 0, c.chunk_bytes);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(chunks.front().start, 0u);
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
    ::testing::Values(PassCase{"ext4_uneven_tail", ext4(1000 * kMiB + 512), 64 * kMiB},
                      PassCase{"ext4_one_chunk", ext4(1000 * kMiB), 0},
                      PassCase{"ext4_chunk_larger_than_fs", ext4(10 * kMiB), 64 * kMiB},
                      PassCase{"xfs_chunk_splits_ags", xfs(1000 * kMiB, 250 * kMiB), 100 * kMiB},
                      PassCase{"xfs_chunk_spans_ags", xfs(1000 * kMiB, 100 * kMiB), 250 * kMiB},
                      PassCase{"xfs_short_last_ag", xfs(1030 * kMiB, 256 * kMiB), 512 * kMiB},
                      PassCase{"xfs_chunk_equals_ag", xfs(1024 * kMiB, 256 * kMiB), 256 * kMiB},
                      PassCase{"xfs_one_chunk", xfs(1024 * kMiB, 256 * kMiB), 0},
                      PassCase{"xfs_unknown_ags", xfs(1000 * kMiB, 0), 300 * kMiB},
                      PassCase{"btrfs_chunked", btrfs(1000 * kMiB), 128 * kMiB},
                      PassCase{"btrfs_one_chunk", btrfs(1000 * kMiB), 0},
                      PassCase{"unknown_fs", FsGeometry{"zonefs", 1000 * kMiB, 0}, 64 * kMiB},
                      PassCase{"unknown_size", ext4(0), 64 * kMiB}),
    [](const auto& test_info) { return std::string(test_info.param.label); });

TEST(Planner, ChoosesTheRangeKindByFilesystemType) {
  EXPECT_EQ(range_kind_for(ext4(kMiB)), RangeKind::Linear);
  EXPECT_EQ(range_kind_for(FsGeometry{"vfat", kMiB, 0}), RangeKind::Linear);
  EXPECT_EQ(range_kind_for(xfs(kMiB, kMiB / 4)), RangeKind::AgAligned);
  EXPECT_EQ(range_kind_for(xfs(kMiB, 0)), RangeKind::Linear);
  EXPECT_EQ(range_kind_for(btrfs(kMiB)), RangeKind::LogicalSpace);
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
      const bool whole_ags = chunk.start % ag == 0 && (end_of(chunk) % ag == 0 ||
                                                       end_of(chunk) == 1030 * kMiB);
      EXPECT_TRUE(inside_one_ag || whole_ags)
          << "chunk " << chunk.start << "+" << chunk.len << " for " << chunk_bytes;
    }
  }
}

TEST(Planner, RoundsALargeXfsChunkDownToWholeAllocationGroups) {
  const auto chunks = chunks_from(xfs(1000 * kMiB, 100 * kMiB), 0, 250 * kMiB);
  ASSERT_EQ(chunks.size(), 5u);
  for (const TrimRange& chunk : chunks) EXPECT_EQ(chunk.len, 200 * kMiB);
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
  EXPECT_EQ(after->len, 300 * kMiB);
}

TEST(Planner, EndsABtrfsPassWithOneChunkOverTheRestOfItsLogicalSpace) {
  const auto chunks = chunks_from(btrfs(1000 * kMiB), 0, 400 * kMiB);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(end_of(chunks[2]), 1000 * kMiB);
  EXPECT_EQ(chunks[3].start, 1000 * kMiB);
  EXPECT_EQ(chunks[3].len, kMax - 1000 * kMiB);
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

TEST(Planner, CapsBtrfsProgressUntilTheTailChunkIsDone) {
  const FsGeometry g = btrfs(1000 * kMiB);
  EXPECT_DOUBLE_EQ(pass_progress(g, 500 * kMiB), 0.5);
  EXPECT_LE(pass_progress(g, 999 * kMiB), 0.99);
  EXPECT_LE(pass_progress(g, 1000 * kMiB), 0.99);
  EXPECT_GT(pass_progress(g, 1000 * kMiB), 0.9);
  EXPECT_EQ(pass_progress(g, kMax), 1.0);
}

}  // namespace
}  // namespace trimd
