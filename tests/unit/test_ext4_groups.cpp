// The ext4 groups (size and start) from the superblock copies GETFSMAP reports.
#include "ext4_groups.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace trimd {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

TEST(Ext4Groups, AreAsLongAsFromThePrimarySuperblockToGroupOnesBackup) {
  // mkfs.ext4 -b 4096 -g 8192: copies at 0 and 32 MiB (as xfs_io's fsmap shows).
  const std::vector<FsMetadataRecord> records{{0, 4 * kKiB}, {32 * kMiB, 4 * kKiB}};
  EXPECT_EQ(ext4_groups_from_superblocks(records, 4 * kKiB), (Ext4Groups{32 * kMiB, 0}));
}

TEST(Ext4Groups, StartAtBlockOneWhenBlocksAreOneKibibyte) {
  // -b 1024 -g 4096: block 0 is the boot block, the primary copy is block 1.
  const std::vector<FsMetadataRecord> records{{kKiB, kKiB}, {4097 * kKiB, kKiB}};
  EXPECT_EQ(ext4_groups_from_superblocks(records, kKiB), (Ext4Groups{4 * kMiB, kKiB}));
}

TEST(Ext4Groups, AreUnknownWhenThePrimaryCopyIsNotInGroupZero) {
  const std::vector<FsMetadataRecord> records{{5 * kMiB, kKiB}, {9 * kMiB, kKiB}};
  EXPECT_FALSE(ext4_groups_from_superblocks(records, kKiB));
}

TEST(Ext4Groups, AreUnknownWithOneGroup) {
  const std::vector<FsMetadataRecord> records{{0, 4 * kKiB}};
  EXPECT_FALSE(ext4_groups_from_superblocks(records, 4 * kKiB));
  EXPECT_FALSE(ext4_groups_from_superblocks({}, 4 * kKiB));
}

TEST(Ext4Groups, AreUnknownWhenTheRecordsAreNotSingleBlockCopies) {
  // A layout this reading does not know (meta_bg, sparse_super2) keeps the default.
  const std::vector<FsMetadataRecord> merged{{0, 8 * kKiB}, {32 * kMiB, 4 * kKiB}};
  EXPECT_FALSE(ext4_groups_from_superblocks(merged, 4 * kKiB));
  const std::vector<FsMetadataRecord> backwards{{32 * kMiB, 4 * kKiB}, {0, 4 * kKiB}};
  EXPECT_FALSE(ext4_groups_from_superblocks(backwards, 4 * kKiB));
}

TEST(Ext4Groups, AreNeverLargerThanOneBitmapBlockCanMap) {
  // 8 * 4096 blocks of 4 KiB = 128 MiB; a second copy further away is group 3's or later.
  const std::vector<FsMetadataRecord> records{{0, 4 * kKiB}, {384 * kMiB, 4 * kKiB}};
  EXPECT_FALSE(ext4_groups_from_superblocks(records, 4 * kKiB));
}

TEST(Ext4Groups, FallBackToMkfsLayoutWhenGetfsmapCannotAnswer) {
  EXPECT_EQ(ext4_groups(-1, 4 * kKiB), (Ext4Groups{128 * kMiB, 0}));
  EXPECT_EQ(ext4_groups(-1, kKiB), (Ext4Groups{8 * kMiB, kKiB}));
}

}  // namespace
}  // namespace trimd
