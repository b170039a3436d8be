// btrfs in chunks: the prober lists the block groups, the planner cuts
// chunks on their boundaries, and a chunked pass then reclaims what one
// whole-range `fstrim` does (a chunk starting inside a block group misses
// most of that group's free space: measured on 6.18, see test_loopfs).
#include <gtest/gtest.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <limits>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "fs_probe.hpp"
#include "loopfs.hpp"
#include "planner.hpp"
#include "trimmer.hpp"

namespace trimd {
// Found by gtest through argument-dependent lookup.
std::ostream& operator<<(std::ostream& os, const Extent& e) {
  return os << "[" << e.start << ", +" << e.len << ")";
}
}  // namespace trimd

namespace trimd::test {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// ---- the search-buffer parser, without root --------------------------------

// A BTRFS_IOC_TREE_SEARCH answer, built the way the kernel lays it out: a
// search header, then the item as it is on disk (little-endian).
class SearchBuffer {
 public:
  SearchBuffer& chunk(std::uint64_t logical_start, std::uint64_t length) {
    std::vector<std::uint8_t> item(sizeof(btrfs_chunk), 0);
    for (std::size_t i = 0; i < 8; ++i) item[i] = static_cast<std::uint8_t>(length >> (8 * i));
    return item_of_type(BTRFS_CHUNK_ITEM_KEY, logical_start, item);
  }
  SearchBuffer& item_of_type(std::uint32_t type, std::uint64_t offset,
                             const std::vector<std::uint8_t>& item) {
    btrfs_ioctl_search_header header{};
    header.transid = 7;
    header.objectid = BTRFS_FIRST_CHUNK_TREE_OBJECTID;
    header.offset = offset;
    header.type = type;
    header.len = static_cast<std::uint32_t>(item.size());
    const auto* raw = reinterpret_cast<const std::uint8_t*>(&header);
    bytes_.insert(bytes_.end(), raw, raw + sizeof header);
    bytes_.insert(bytes_.end(), item.begin(), item.end());
    ++items_;
    return *this;
  }
  SearchBuffer& cut(std::size_t bytes) {
    bytes_.resize(bytes_.size() - bytes);
    return *this;
  }
  BtrfsChunkSearchPage parse() const { return parse(items_); }
  BtrfsChunkSearchPage parse(std::uint32_t nr_items) const {
    return parse_btrfs_chunk_search(bytes_, nr_items);
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::uint32_t items_ = 0;
};

TEST(BtrfsChunkSearch, ReadsTheLogicalStartAndLengthOfEveryChunkItem) {
  const auto page = SearchBuffer()
                        .chunk(13631488, 8 * kMiB)
                        .chunk(22020096, 8 * kMiB)
                        .chunk(1ull << 40, 0x0102030405060708)
                        .parse();
  const std::vector<Extent> expected = {
      {13631488, 8 * kMiB}, {22020096, 8 * kMiB}, {1ull << 40, 0x0102030405060708}};
  EXPECT_EQ(page.block_groups, expected);
  EXPECT_EQ(page.last_offset, 1ull << 40);
}

TEST(BtrfsChunkSearch, SkipsOtherItemsButGoesOnAfterThem) {
  const auto page = SearchBuffer()
                        .chunk(kMiB, kMiB)
                        .item_of_type(BTRFS_DEV_ITEM_KEY, 5 * kMiB, std::vector<std::uint8_t>(98))
                        .chunk(9 * kMiB, 2 * kMiB)
                        .item_of_type(BTRFS_DEV_ITEM_KEY, 12 * kMiB, {})
                        .parse();
  const std::vector<Extent> expected = {{kMiB, kMiB}, {9 * kMiB, 2 * kMiB}};
  EXPECT_EQ(page.block_groups, expected);
  EXPECT_EQ(page.last_offset, 12 * kMiB);
}

TEST(BtrfsChunkSearch, ReadsNoMoreItemsThanTheKernelSaysItReturned) {
  const SearchBuffer buffer = SearchBuffer().chunk(kMiB, kMiB).chunk(2 * kMiB, kMiB);
  const auto page = buffer.parse(1);
  ASSERT_EQ(page.block_groups.size(), 1u);
  EXPECT_EQ(page.last_offset, kMiB);
  EXPECT_TRUE(buffer.parse(0).block_groups.empty());
  EXPECT_FALSE(buffer.parse(0).last_offset.has_value());
}

TEST(BtrfsChunkSearch, StopsAtATruncatedItem) {
  const auto page = SearchBuffer().chunk(kMiB, kMiB).chunk(2 * kMiB, kMiB).cut(1).parse();
  ASSERT_EQ(page.block_groups.size(), 1u);
  EXPECT_EQ(page.block_groups[0].start, kMiB);
  EXPECT_EQ(page.last_offset, kMiB);
  EXPECT_TRUE(
      SearchBuffer().chunk(kMiB, kMiB).cut(sizeof(btrfs_chunk) + 1).parse().block_groups.empty());
}

TEST(BtrfsChunkSearch, SortsBlockGroupsAndDropsEmptyOnes) {
  const std::vector<Extent> sorted =
      sorted_block_groups({{30 * kMiB, kMiB}, {10 * kMiB, 0}, {2 * kMiB, 3 * kMiB}});
  const std::vector<Extent> expected = {{2 * kMiB, 3 * kMiB}, {30 * kMiB, kMiB}};
  EXPECT_EQ(sorted, expected);
}

TEST(BtrfsChunkSearch, ProberFindsNoBlockGroupsWhereThereIsNoBtrfs) {
  const FsGeometry geometry = SystemFsProber().geometry("/proc", "btrfs", 512 * kMiB);
  EXPECT_TRUE(geometry.block_groups.empty());
  EXPECT_EQ(range_kind_for(geometry), RangeKind::WholeRange);
}

// ---- real btrfs on loop devices ---------------------------------------------

// btrfs defaults to discard=async: the deletes would be trimmed on their own.
constexpr const char* kMountOptions = "nodiscard";
constexpr std::uint64_t kImageMib = 1024;
constexpr std::size_t kFiles = 512;
constexpr std::uint64_t kFileBytes = 256 * 1024;
constexpr std::uint64_t kChunkBytes = 64 * kMiB;

// What `btrfs inspect-internal dump-tree -t chunk` says, for comparison.
std::vector<Extent> block_groups_from_dump_tree(const std::string& image) {
  const std::string dump =
      run_or_throw({"btrfs", "inspect-internal", "dump-tree", "-t", "chunk", image});
  static const std::regex item(
      R"(CHUNK_ITEM ([0-9]+)\) itemoff [0-9]+ itemsize [0-9]+\s+length ([0-9]+))");
  std::vector<Extent> groups;
  for (std::sregex_iterator it(dump.begin(), dump.end(), item), end; it != end; ++it)
    groups.push_back(Extent{std::stoull((*it)[1].str()), std::stoull((*it)[2].str())});
  return groups;
}

class RealBtrfs : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_ROOT_OR_FAIL();
    TRIMD_SKIP_OR_FAIL_IF(missing_tools(tools_for(Fs::Btrfs)));
    REQUIRE_TOOLS_OR_FAIL("btrfs");
  }

  // Twins share one fsid: the kernel must forget this one before the next
  // is mounted, or it may open the wrong device.
  static void put_away(LoopImage& image) {
    image.unmount();
    if (image.attached()) run_command({"btrfs", "device", "scan", "--forget", image.device()});
    image.detach();
  }

  // The way trimd's manager walks a pass: cursor = end of the last chunk.
  static std::vector<TrimRange> trim_in_planned_chunks(const LoopImage& image) {
    const FsGeometry geometry =
        SystemFsProber().geometry(image.mount_point(), "btrfs", image.size_bytes());
    EXPECT_EQ(range_kind_for(geometry), RangeKind::LogicalSpace);
    const TrimTarget target{image.mount_point(), image.mounted_dev()};
    std::vector<TrimRange> chunks;
    std::uint64_t cursor = 0;
    while (const auto range = next_chunk(geometry, cursor, kChunkBytes, 0)) {
      const TrimOutcome outcome = fitrim(target, *range);
      EXPECT_EQ(outcome.status, TrimStatus::Ok) << outcome.message;
      const std::uint64_t next = range->start + std::min(range->len, kMax - range->start);
      EXPECT_GT(next, cursor);
      chunks.push_back(*range);
      if (outcome.status != TrimStatus::Ok || next <= cursor || chunks.size() > 10'000) break;
      cursor = next;
    }
    EXPECT_EQ(pass_progress(geometry, cursor), 1.0);
    return chunks;
  }
};

TEST_F(RealBtrfs, ProberFindsTheBlockGroupsOfAFreshFilesystem) {
  LoopImage image = LoopImage::create(512);
  image.mkfs(Fs::Btrfs);
  image.mount(kMountOptions);
  const FsGeometry geometry =
      SystemFsProber().geometry(image.mount_point(), "btrfs", image.size_bytes());
  image.unmount();
  const std::vector<Extent>& groups = geometry.block_groups;
  ASSERT_GE(groups.size(), 3u);  // data, metadata, system
  for (std::size_t i = 0; i < groups.size(); ++i) {
    EXPECT_GT(groups[i].len, 0u) << groups[i];
    if (i > 0) {
      EXPECT_GE(groups[i].start, groups[i - 1].start + groups[i - 1].len) << groups[i];
    }
  }
  EXPECT_EQ(groups, block_groups_from_dump_tree(image.backing_file()));
}

TEST_F(RealBtrfs, ChunkedPassReclaimsWhatOneWholeRangeFstrimReclaims) {
  LoopImage original = LoopImage::create(kImageMib);
  original.mkfs(Fs::Btrfs);
  original.mount(kMountOptions);
  original.write_fragmented_files(kFiles, kFileBytes);
  const std::uint64_t deleted = original.delete_every_other();
  original.unmount();
  LoopImage fstrimmed = original.clone_sparse();
  LoopImage chunked = original.clone_sparse();
  put_away(original);
  const std::uint64_t untrimmed = fstrimmed.allocated_bytes();
  ASSERT_EQ(chunked.allocated_bytes(), untrimmed);

  fstrimmed.mount(kMountOptions);
  const CommandResult fstrim = run_command({"fstrim", fstrimmed.mount_point()});
  ASSERT_TRUE(fstrim.ok()) << fstrim.err;
  put_away(fstrimmed);
  const std::uint64_t after_fstrim = fstrimmed.allocated_bytes();

  chunked.mount(kMountOptions);
  const std::vector<TrimRange> chunks = trim_in_planned_chunks(chunked);
  put_away(chunked);
  const std::uint64_t after_chunks = chunked.allocated_bytes();

  std::cout << "btrfs " << kImageMib << " MiB, " << deleted
            << " bytes deleted; allocated: " << untrimmed << " untrimmed, " << after_fstrim
            << " after fstrim, " << after_chunks << " after " << chunks.size()
            << " chunks of at most " << kChunkBytes / kMiB << " MiB:";
  for (const TrimRange& range : chunks) std::cout << " " << range.start << "+" << range.len;
  std::cout << "\n";
  RecordProperty("untrimmed_bytes", std::to_string(untrimmed));
  RecordProperty("fstrim_bytes", std::to_string(after_fstrim));
  RecordProperty("chunked_bytes", std::to_string(after_chunks));
  RecordProperty("chunks", static_cast<int>(chunks.size()));

  EXPECT_GE(untrimmed, after_fstrim + deleted) << "fstrim reclaimed less than was deleted";
  EXPECT_GT(chunks.size(), 1u);
  const std::uint64_t tolerance = std::max(after_fstrim / 100, 4 * kMiB);
  const std::uint64_t difference =
      after_chunks > after_fstrim ? after_chunks - after_fstrim : after_fstrim - after_chunks;
  EXPECT_LE(difference, tolerance)
      << "chunked " << after_chunks << " bytes vs fstrim " << after_fstrim;
}

}  // namespace
}  // namespace trimd::test
