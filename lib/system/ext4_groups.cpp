#include "ext4_groups.hpp"

#include <linux/fsmap.h>
#include <sys/ioctl.h>

#include <cstdlib>
#include <memory>

#include "fs_probe.hpp"

namespace trimd {

namespace {

// Records per GETFSMAP call; group 0 of a busy filesystem has many (one per
// file extent), so the walk pages on from the last one.
constexpr std::size_t kRecordsPerCall = 256;
// Enough for group 0 of any filesystem trimd meets; beyond it the default
// group size is kept rather than walking a whole large filesystem's map.
constexpr std::size_t kMaxRecords = 64 * 1024;
// "static fs metadata": ext4 takes xfs's code for its superblock copies.
constexpr std::uint64_t kOwnerFsMetadata = FMR_OWNER('X', 1);

struct FsmapDeleter {
  void operator()(fsmap_head* head) const { std::free(head); }
};

std::unique_ptr<fsmap_head, FsmapDeleter> fsmap_buffer(std::size_t records) {
  void* memory = std::calloc(1, fsmap_sizeof(static_cast<unsigned>(records)));
  return std::unique_ptr<fsmap_head, FsmapDeleter>(static_cast<fsmap_head*>(memory));
}

}  // namespace

std::optional<Ext4Groups> ext4_groups_from_superblocks(std::span<const FsMetadataRecord> records,
                                                       std::uint64_t block_size) {
  if (records.size() < 2 || block_size == 0) return std::nullopt;
  const FsMetadataRecord& primary = records[0];
  const FsMetadataRecord& backup = records[1];
  if (primary.length != block_size || backup.length != block_size) return std::nullopt;
  if (backup.physical <= primary.physical) return std::nullopt;
  const std::uint64_t distance = backup.physical - primary.physical;
  // A group has at most 8 * block_size blocks, and a whole number of blocks.
  if (distance % block_size != 0 || distance > 8 * block_size * block_size) return std::nullopt;
  // The primary copy opens group 0, within its first group's length.
  if (primary.physical % block_size != 0 || primary.physical >= distance) return std::nullopt;
  return Ext4Groups{distance, primary.physical};
}

std::vector<FsMetadataRecord> ext4_superblock_records(int fd, std::uint64_t block_size,
                                                      std::size_t max_records) {
  std::vector<FsMetadataRecord> found;
  auto head = fsmap_buffer(kRecordsPerCall);
  if (!head) return found;
  head->fmh_keys[1].fmr_device = ~0u;
  head->fmh_keys[1].fmr_flags = ~0u;
  // Group 1's copy is no further than the largest group (plus the 1 KiB
  // boot block): ext4 need not load the bitmaps of any group beyond it.
  head->fmh_keys[1].fmr_physical = 8 * block_size * block_size + 2 * block_size;
  head->fmh_keys[1].fmr_owner = ~0ull;
  head->fmh_keys[1].fmr_offset = ~0ull;
  for (std::size_t seen = 0; seen < max_records && found.size() < 2;) {
    head->fmh_count = kRecordsPerCall;
    if (::ioctl(fd, FS_IOC_GETFSMAP, head.get()) != 0 || head->fmh_entries == 0) break;
    for (unsigned i = 0; i < head->fmh_entries && found.size() < 2; ++i) {
      const fsmap& record = head->fmh_recs[i];
      if ((record.fmr_flags & FMR_OF_SPECIAL_OWNER) && record.fmr_owner == kOwnerFsMetadata)
        found.push_back({record.fmr_physical, record.fmr_length});
    }
    seen += head->fmh_entries;
    const fsmap& last = head->fmh_recs[head->fmh_entries - 1];
    if (last.fmr_flags & FMR_OF_LAST) break;
    fsmap_advance(head.get());
  }
  return found;
}

Ext4Groups ext4_default_groups(std::uint64_t block_size) {
  return Ext4Groups{ext4_block_group_bytes(block_size), block_size == 1024 ? 1024u : 0u};
}

Ext4Groups ext4_groups(int fd, std::uint64_t block_size) {
  const auto records = ext4_superblock_records(fd, block_size, kMaxRecords);
  if (auto groups = ext4_groups_from_superblocks(records, block_size)) return *groups;
  return ext4_default_groups(block_size);
}

}  // namespace trimd
