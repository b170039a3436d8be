// Questions asked of a mounted filesystem through ioctls on its mount point.
// No libblkid: reading superblocks off the device needs more privilege and
// knowledge than asking the mounted filesystem itself.
#include "fs_probe.hpp"

#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/btrfs_tree.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/types.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>

#include "ext4_groups.hpp"
#include "fs_kind.hpp"
#include "unique_fd.hpp"

// Generic since Linux 6.5; Debian 12's kernel headers (6.1) lack it.
#ifndef FS_IOC_GETFSUUID
struct fsuuid2 {
  __u8 len;
  __u8 uuid[16];
};
#define FS_IOC_GETFSUUID _IOR(0x15, 0, struct fsuuid2)
#endif

namespace {

using trimd::UniqueFd;

// XFS_IOC_FSGEOMETRY_V1 from <xfs/xfs_fs.h>, defined here so that building
// trimd does not need xfslibs-dev. The kernel keeps the v1 ioctl for old
// binaries, and its prefix holds everything the planner needs.
struct xfs_fsop_geom_v1 {
  __u32 blocksize;
  __u32 rtextsize;
  __u32 agblocks;
  __u32 agcount;
  __u32 logblocks;
  __u32 sectsize;
  __u32 inodesize;
  __u32 imaxpct;
  __u64 datablocks;
  __u64 rtblocks;
  __u64 rtextents;
  __u64 logstart;
  unsigned char uuid[16];
  __u32 sunit;
  __u32 swidth;
  __s32 version;
  __u32 flags;
  __u32 logsectsize;
  __u32 rtsectsize;
  __u32 dirblocksize;
};
static_assert(sizeof(xfs_fsop_geom_v1) == 112, "must match the kernel's struct");
constexpr unsigned long kXfsIocFsGeometryV1 = _IOR('X', 100, struct xfs_fsop_geom_v1);

constexpr std::size_t kUuidBytes = 16;

UniqueFd open_mount_point(const std::string& mount_point) {
  return UniqueFd(::open(mount_point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

std::optional<std::string> uuid_from_generic_ioctl(int fd) {
  struct fsuuid2 answer {};
  answer.len = kUuidBytes;
  if (::ioctl(fd, FS_IOC_GETFSUUID, &answer) != 0) return std::nullopt;
  return trimd::format_uuid(std::span<const std::uint8_t>(answer.uuid, answer.len));
}

bool is_btrfs(int fd) {
  struct statfs st {};
  return ::fstatfs(fd, &st) == 0 &&
         st.f_type == static_cast<decltype(st.f_type)>(BTRFS_SUPER_MAGIC);
}

// The btrfs fsid, which is what blkid calls its UUID.
std::optional<std::string> uuid_from_btrfs_ioctl(int fd) {
  if (!is_btrfs(fd)) return std::nullopt;
  struct btrfs_ioctl_fs_info_args info {};
  if (::ioctl(fd, BTRFS_IOC_FS_INFO, &info) != 0) return std::nullopt;
  return trimd::format_uuid(std::span<const std::uint8_t>(info.fsid, BTRFS_FSID_SIZE));
}

std::optional<trimd::XfsGeometry> xfs_geometry(const std::string& mount_point) {
  UniqueFd fd = open_mount_point(mount_point);
  struct xfs_fsop_geom_v1 geom {};
  if (fd.get() < 0 || ::ioctl(fd.get(), kXfsIocFsGeometryV1, &geom) != 0) {
    const std::error_code error(errno, std::generic_category());
    spdlog::debug("no xfs geometry for {}: {}", mount_point, error.message());
    return std::nullopt;
  }
  return trimd::XfsGeometry{geom.blocksize, geom.agblocks, geom.datablocks};
}

// One page of chunk items from `from` on: tree 3, objectid 256, type 228.
btrfs_ioctl_search_key chunk_search_key(std::uint64_t from) {
  btrfs_ioctl_search_key key{};
  key.tree_id = BTRFS_CHUNK_TREE_OBJECTID;
  key.min_objectid = key.max_objectid = BTRFS_FIRST_CHUNK_TREE_OBJECTID;
  key.min_type = key.max_type = BTRFS_CHUNK_ITEM_KEY;
  key.min_offset = from;
  key.max_offset = std::numeric_limits<std::uint64_t>::max();
  key.max_transid = std::numeric_limits<std::uint64_t>::max();
  key.nr_items = std::numeric_limits<std::uint32_t>::max();  // as many as fit
  return key;
}

// Every block group, read page by page; none when the search fails.
std::vector<trimd::Extent> btrfs_block_groups(const std::string& mount_point) {
  UniqueFd fd = open_mount_point(mount_point);
  if (fd.get() < 0 || !is_btrfs(fd.get())) return {};
  std::vector<trimd::Extent> groups;
  btrfs_ioctl_search_args args{};
  for (std::uint64_t from = 0;;) {
    args.key = chunk_search_key(from);
    if (::ioctl(fd.get(), BTRFS_IOC_TREE_SEARCH, &args) != 0) {
      const std::error_code error(errno, std::generic_category());
      spdlog::warn("{}: cannot list the btrfs block groups ({}); trimming it in one call",
                   mount_point, error.message());
      return {};
    }
    const auto page = trimd::parse_btrfs_chunk_search(
        std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(args.buf),
                                      sizeof args.buf),
        args.key.nr_items);
    groups.insert(groups.end(), page.block_groups.begin(), page.block_groups.end());
    if (!page.last_offset || *page.last_offset == std::numeric_limits<std::uint64_t>::max()) break;
    from = *page.last_offset + 1;
  }
  return groups;
}

std::uint64_t little_endian_u64(const std::uint8_t* bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | bytes[i];
  return value;
}

std::uint64_t statfs_bytes(const std::string& mount_point) {
  struct statfs st {};
  if (::statfs(mount_point.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_blocks) * static_cast<std::uint64_t>(st.f_bsize);
}

std::uint64_t statfs_block_size(const std::string& mount_point) {
  struct statfs st {};
  if (::statfs(mount_point.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_bsize);
}

trimd::Ext4Groups ext_groups(const std::string& mount_point) {
  const std::uint64_t block_size = statfs_block_size(mount_point);
  UniqueFd fd = open_mount_point(mount_point);
  if (fd.get() < 0) return trimd::ext4_default_groups(block_size);
  return trimd::ext4_groups(fd.get(), block_size);
}

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

namespace trimd {

std::optional<std::string> format_uuid(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kUuidBytes) return std::nullopt;
  if (std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; }))
    return std::nullopt;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += kHex[bytes[i] >> 4];
    text += kHex[bytes[i] & 0x0f];
  }
  return text;
}

std::optional<std::string> uuid_from_symlink_dir(const std::string& dir,
                                                 const std::string& source_device) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // increment(ec), not range-for: a directory changing under udev must not throw.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code same_ec;
    if (it->is_symlink(same_ec) && fs::equivalent(it->path(), source_device, same_ec) && !same_ec)
      return lower_case(it->path().filename().string());
  }
  return std::nullopt;
}

BtrfsChunkSearchPage parse_btrfs_chunk_search(std::span<const std::uint8_t> buffer,
                                              std::uint32_t nr_items) {
  BtrfsChunkSearchPage page;
  std::size_t at = 0;
  for (std::uint32_t i = 0; i < nr_items && buffer.size() - at >= sizeof(btrfs_ioctl_search_header);
       ++i) {
    btrfs_ioctl_search_header header{};
    std::memcpy(&header, buffer.data() + at, sizeof header);
    at += sizeof header;
    if (header.len > buffer.size() - at) break;
    page.last_offset = header.offset;
    if (header.type == BTRFS_CHUNK_ITEM_KEY && header.len >= sizeof(std::uint64_t))
      page.block_groups.push_back(Extent{header.offset, little_endian_u64(buffer.data() + at)});
    at += header.len;
  }
  return page;
}

std::vector<Extent> sorted_block_groups(std::vector<Extent> groups) {
  std::erase_if(groups, [](const Extent& group) { return group.len == 0; });
  std::sort(groups.begin(), groups.end(),
            [](const Extent& a, const Extent& b) { return a.start < b.start; });
  return groups;
}

FsGeometry combine_geometry(const std::string& fs_type, std::uint64_t device_size,
                            const std::optional<XfsGeometry>& xfs, std::uint64_t statfs_size) {
  FsGeometry geometry;
  geometry.fs_type = fs_type;
  geometry.size_bytes = device_size;
  if (xfs) {
    geometry.group_bytes = std::uint64_t{xfs->ag_blocks} * xfs->block_size;
    geometry.size_bytes = std::max(device_size, xfs->data_blocks * xfs->block_size);
  }
  if (geometry.size_bytes == 0) geometry.size_bytes = statfs_size;
  return geometry;
}

std::optional<std::string> SystemFsProber::uuid(const std::string& mount_point,
                                                const std::string& source_device) {
  UniqueFd fd = open_mount_point(mount_point);
  if (fd.get() >= 0) {
    if (auto id = uuid_from_generic_ioctl(fd.get())) return id;
    if (auto id = uuid_from_btrfs_ioctl(fd.get())) return id;
  }
  return uuid_from_symlink_dir("/dev/disk/by-uuid", source_device);
}

FsGeometry SystemFsProber::geometry(const std::string& mount_point, const std::string& fs_type,
                                    std::uint64_t device_size) {
  const FsKind kind = fs_kind(fs_type);
  std::optional<XfsGeometry> xfs;
  if (kind == FsKind::Xfs) xfs = xfs_geometry(mount_point);
  FsGeometry geometry = combine_geometry(fs_type, device_size, xfs, statfs_bytes(mount_point));
  if (kind == FsKind::Btrfs)
    geometry.block_groups = sorted_block_groups(btrfs_block_groups(mount_point));
  if (is_ext(kind)) {
    const Ext4Groups groups = ext_groups(mount_point);
    geometry.group_bytes = groups.bytes;
    geometry.group_origin = groups.origin;
  }
  return geometry;
}

std::uint64_t ext4_block_group_bytes(std::uint64_t block_size) {
  // One bitmap block of 8 * block_size bits maps the group: 128 MiB at 4 KiB.
  return 8 * block_size * block_size;
}

MountIdentity SystemFsProber::identify(const std::string& mount_point) {
  // O_PATH: no read permission needed, and nothing of the filesystem runs.
  UniqueFd fd(open_directory_nofollow(mount_point.c_str(), O_PATH));
  MountIdentity identity;
  if (fd.get() < 0 || !read_mount_identity(fd.get(), identity)) return MountIdentity{};
  return identity;
}

}  // namespace trimd
