// Questions asked of a mounted filesystem itself (ioctls on the mount point).
#pragma once

#include <cstdint>
#include <optional>

#include <sys/types.h>
#include <span>
#include <string>
#include <vector>

#include "fs_types.hpp"
#include "mount_identity.hpp"

namespace trimd {

class FsProber {
 public:
  virtual ~FsProber() = default;
  // The filesystem UUID, lower-case with dashes; nothing when unknown.
  virtual std::optional<std::string> uuid(const std::string& mount_point,
                                          const std::string& source_device) = 0;
  // Geometry for the planner. `device_size` is what sysfs says of the device.
  virtual FsGeometry geometry(const std::string& mount_point, const std::string& fs_type,
                              std::uint64_t device_size) = 0;
  // The mount found at `mount_point` right now, all fields from one open
  // file; all 0 when it cannot be opened. Its device is not always
  // mountinfo's major:minor: btrfs gives each subvolume its own anonymous one.
  virtual MountIdentity identify(const std::string& mount_point) = 0;
};

// FS_IOC_GETFSUUID, then libblkid-free fallbacks: BTRFS_IOC_FS_INFO (btrfs
// answers ENOTTY to the generic ioctl on 6.18), then /dev/disk/by-uuid;
// XFS_IOC_FSGEOMETRY_V1 for xfs allocation groups; BTRFS_IOC_TREE_SEARCH over
// the chunk tree for btrfs block groups (needs CAP_SYS_ADMIN: without it the
// geometry has none and btrfs is trimmed in one whole-range call).
class SystemFsProber final : public FsProber {
 public:
  std::optional<std::string> uuid(const std::string& mount_point,
                                  const std::string& source_device) override;
  FsGeometry geometry(const std::string& mount_point, const std::string& fs_type,
                      std::uint64_t device_size) override;
  MountIdentity identify(const std::string& mount_point) override;
};

// The size of an ext2/3/4 block group as mkfs makes it by default (no
// bigalloc, no -g; ext4_groups.hpp asks the filesystem for its own). A
// chunk must not end inside a group: on 6.18 ext4 trims
// each free extent that starts in the range up to its end, and marks a group
// done only when the range starts at the group's start, so chunks smaller than
// a group send the same discards again and again (measured: 2 GiB of discards
// for a 512 MiB filesystem with 8 MiB chunks).
std::uint64_t ext4_block_group_bytes(std::uint64_t block_size);

// The fields of the xfs geometry ioctl the planner needs.
struct XfsGeometry {
  std::uint32_t block_size = 0;
  std::uint32_t ag_blocks = 0;    // blocks per allocation group
  std::uint64_t data_blocks = 0;  // blocks in the data section
};

// What geometry() makes of its measurements: the xfs ioctl's answer when
// there is one, and statfs's size as the last resort for an unknown device size.
FsGeometry combine_geometry(const std::string& fs_type, std::uint64_t device_size,
                            const std::optional<XfsGeometry>& xfs, std::uint64_t statfs_bytes);

// The block groups in one BTRFS_IOC_TREE_SEARCH answer: `nr_items` search
// headers (struct btrfs_ioctl_search_header), each followed by its item. Chunk
// items (type BTRFS_CHUNK_ITEM_KEY) give a group: the key offset is its logical
// start, the item's first field its little-endian length. Other items are
// skipped; a truncated buffer ends the walk.
struct BtrfsChunkSearchPage {
  std::vector<Extent> block_groups;
  std::optional<std::uint64_t> last_offset;  // key offset of the last item read: where to go on
};
BtrfsChunkSearchPage parse_btrfs_chunk_search(std::span<const std::uint8_t> buffer,
                                              std::uint32_t nr_items);

// Sorted by start, empty ones dropped: what FsGeometry::block_groups promises.
std::vector<Extent> sorted_block_groups(std::vector<Extent> groups);

// 16 raw bytes as "8-4-4-4-12" lower-case hex; nothing for another length or
// the nil UUID (filesystems without one report all zeros).
std::optional<std::string> format_uuid(std::span<const std::uint8_t> bytes);

// The name of the entry in `dir` (normally /dev/disk/by-uuid) that resolves
// to the same device node as `source_device`, lower-cased.
std::optional<std::string> uuid_from_symlink_dir(const std::string& dir,
                                                 const std::string& source_device);

}  // namespace trimd
