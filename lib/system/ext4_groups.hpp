// The size of an ext2/3/4 block group and where group 0 begins, asked of
// the mounted filesystem.
// mkfs.ext4 makes a group as large as one bitmap block can map (8 * block
// size blocks: 128 MiB at 4 KiB), but `mkfs -g` makes them smaller, and a
// chunk that ends inside a group makes ext4 forget that the group was
// trimmed (fs_probe.hpp). There is no sysfs file for it, and trimd's unit
// may not open block devices (DevicePolicy=closed), so the superblock is not
// read: FS_IOC_GETFSMAP reports every superblock copy as "static fs
// metadata", and the first backup sits at the start of group 1.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace trimd {

// Where GETFSMAP saw "static fs metadata" (FMR_OWN_FS), in bytes.
struct FsMetadataRecord {
  std::uint64_t physical = 0;
  std::uint64_t length = 0;
};

// Where ext4's block groups lie: every group is `bytes` long and group 0
// begins at `origin` (the primary superblock's block: 1 KiB with 1 KiB
// blocks, whose block 0 is the boot block; 0 otherwise). A FITRIM range
// must start at a group's start for ext4 to remember the group as trimmed.
struct Ext4Groups {
  std::uint64_t bytes = 0;
  std::uint64_t origin = 0;
  friend bool operator==(const Ext4Groups&, const Ext4Groups&) = default;
};

// The groups from the first two superblock copies (the primary and group
// 1's backup, one block each): their distance, and the primary's offset.
// Nothing when fewer than two are given, or when they are not one block
// each (sparse_super2, meta_bg: other layouts, where the default is kept).
std::optional<Ext4Groups> ext4_groups_from_superblocks(std::span<const FsMetadataRecord> records,
                                                       std::uint64_t block_size);

// The first two "static fs metadata" records of the filesystem open at
// `fd`, paging through GETFSMAP over the first largest-possible group, for
// at most `max_records` records; fewer when the ioctl fails (an old kernel,
// not ext4) or the filesystem has one group. It runs on the daemon's loop
// at discovery, as the other probes do: ext4 answers from the block bitmaps
// of groups 0 and 1, which ext4 reads ahead at mount (mb_prefetch).
std::vector<FsMetadataRecord> ext4_superblock_records(int fd, std::uint64_t block_size,
                                                      std::size_t max_records);

// mkfs.ext4's layout for `block_size`: ext4_block_group_bytes(block_size),
// from block 1 when blocks are 1 KiB.
Ext4Groups ext4_default_groups(std::uint64_t block_size);

// ext4_default_groups(block_size) unless GETFSMAP tells otherwise.
Ext4Groups ext4_groups(int fd, std::uint64_t block_size);

}  // namespace trimd
