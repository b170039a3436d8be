// Filesystem types read once from mountinfo's text into a kind.
#include <gtest/gtest.h>

#include "fs_kind.hpp"

namespace {

using trimd::FsKind;

TEST(FsKind, KnownTypesReadAsTheirKind) {
  EXPECT_EQ(trimd::fs_kind("ext4"), FsKind::Ext4);
  EXPECT_EQ(trimd::fs_kind("xfs"), FsKind::Xfs);
  EXPECT_EQ(trimd::fs_kind("btrfs"), FsKind::Btrfs);
  EXPECT_EQ(trimd::fs_kind("f2fs"), FsKind::F2fs);
  EXPECT_EQ(trimd::fs_kind("nilfs2"), FsKind::Nilfs2);
}

TEST(FsKind, UnknownAndLookalikeTypesAreOther) {
  EXPECT_EQ(trimd::fs_kind("fuse.sshfs"), FsKind::Other);
  EXPECT_EQ(trimd::fs_kind("ext4 "), FsKind::Other);
  EXPECT_EQ(trimd::fs_kind("EXT4"), FsKind::Other);
  EXPECT_EQ(trimd::fs_kind(""), FsKind::Other);
}

TEST(FsKind, OnlyExtTwoToFourHaveExtBlockGroups) {
  EXPECT_TRUE(trimd::is_ext(FsKind::Ext2));
  EXPECT_TRUE(trimd::is_ext(FsKind::Ext4));
  EXPECT_FALSE(trimd::is_ext(FsKind::Xfs));
  EXPECT_FALSE(trimd::is_ext(FsKind::Other));
}

TEST(FsKind, XfsBtrfsAndUnknownTypesDoNotTrimOneLinearRange) {
  EXPECT_TRUE(trimd::trims_linear_range(FsKind::Ext4));
  EXPECT_TRUE(trimd::trims_linear_range(FsKind::Vfat));
  EXPECT_FALSE(trimd::trims_linear_range(FsKind::Xfs));
  EXPECT_FALSE(trimd::trims_linear_range(FsKind::Btrfs));
  EXPECT_FALSE(trimd::trims_linear_range(FsKind::Other));
}

}  // namespace
