// The size of an ext2/3/4 block group, asked of the mounted filesystem.
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

// The group size from the first two superblock copies (the primary and
// group 1's backup, one block each): their distance. Nothing when fewer
// than two are given, or when they are not one block each (sparse_super2,
// meta_bg: other layouts, where the default is kept).
std::optional<std::uint64_t> ext4_group_bytes_from_superblocks(
    std::span<const FsMetadataRecord> records, std::uint64_t block_size);

// The first two "static fs metadata" records of the filesystem open at
// `fd`, paging through GETFSMAP over the first largest-possible group, for
// at most `max_records` records; fewer when the ioctl fails (an old kernel,
// not ext4) or the filesystem has one group. It runs on the daemon's loop
// at discovery, as the other probes do: ext4 answers from the block bitmaps
// of groups 0 and 1, which ext4 reads ahead at mount (mb_prefetch).
std::vector<FsMetadataRecord> ext4_superblock_records(int fd, std::uint64_t block_size,
                                                      std::size_t max_records);

// ext4_block_group_bytes(block_size) unless GETFSMAP tells otherwise.
std::uint64_t ext4_group_bytes(int fd, std::uint64_t block_size);

}  // namespace trimd
