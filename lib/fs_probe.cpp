// Questions asked of a mounted filesystem through ioctls on its mount point.
// No libblkid: reading superblocks off the device needs more privilege and
// knowledge than asking the mounted filesystem itself.
#include "fs_probe.hpp"

#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/types.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <system_error>

// Generic since Linux 6.5; Debian 12's kernel headers (6.1) lack it.
#ifndef FS_IOC_GETFSUUID
struct fsuuid2 {
  __u8 len;
  __u8 uuid[16];
};
#define FS_IOC_GETFSUUID _IOR(0x15, 0, struct fsuuid2)
#endif

namespace {

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

class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

ScopedFd open_mount_point(const std::string& mount_point) {
  return ScopedFd(::open(mount_point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

std::optional<std::string> uuid_from_generic_ioctl(int fd) {
  struct fsuuid2 answer {};
  answer.len = kUuidBytes;
  if (::ioctl(fd, FS_IOC_GETFSUUID, &answer) != 0) return std::nullopt;
  return trimd::format_uuid(std::span<const std::uint8_t>(answer.uuid, answer.len));
}

bool is_btrfs(int fd) {
  struct statfs st {};
  return ::fstatfs(fd, &st) == 0 && st.f_type == static_cast<decltype(st.f_type)>(BTRFS_SUPER_MAGIC);
}

// The btrfs fsid, which is what blkid calls its UUID.
std::optional<std::string> uuid_from_btrfs_ioctl(int fd) {
  if (!is_btrfs(fd)) return std::nullopt;
  struct btrfs_ioctl_fs_info_args info {};
  if (::ioctl(fd, BTRFS_IOC_FS_INFO, &info) != 0) return std::nullopt;
  return trimd::format_uuid(std::span<const std::uint8_t>(info.fsid, BTRFS_FSID_SIZE));
}

std::optional<trimd::XfsGeometry> xfs_geometry(const std::string& mount_point) {
  ScopedFd fd = open_mount_point(mount_point);
  struct xfs_fsop_geom_v1 geom {};
  if (fd.get() < 0 || ::ioctl(fd.get(), kXfsIocFsGeometryV1, &geom) != 0) {
    const std::error_code error(errno, std::generic_category());
    spdlog::debug("no xfs geometry for {}: {}", mount_point, error.message());
    return std::nullopt;
  }
  return trimd::XfsGeometry{geom.blocksize, geom.agblocks, geom.datablocks};
}

std::uint64_t statfs_bytes(const std::string& mount_point) {
  struct statfs st {};
  if (::statfs(mount_point.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_blocks) * static_cast<std::uint64_t>(st.f_bsize);
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

FsGeometry combine_geometry(const std::string& fs_type, std::uint64_t device_size,
                            const std::optional<XfsGeometry>& xfs, std::uint64_t statfs_size) {
  FsGeometry geometry;
  geometry.fs_type = fs_type;
  geometry.size_bytes = device_size;
  if (xfs) {
    geometry.xfs_ag_bytes = std::uint64_t{xfs->ag_blocks} * xfs->block_size;
    geometry.size_bytes = std::max(device_size, xfs->data_blocks * xfs->block_size);
  }
  if (geometry.size_bytes == 0) geometry.size_bytes = statfs_size;
  return geometry;
}

std::optional<std::string> SystemFsProber::uuid(const std::string& mount_point,
                                                const std::string& source_device) {
  ScopedFd fd = open_mount_point(mount_point);
  if (fd.get() >= 0) {
    if (auto id = uuid_from_generic_ioctl(fd.get())) return id;
    if (auto id = uuid_from_btrfs_ioctl(fd.get())) return id;
  }
  return uuid_from_symlink_dir("/dev/disk/by-uuid", source_device);
}

FsGeometry SystemFsProber::geometry(const std::string& mount_point, const std::string& fs_type,
                                    std::uint64_t device_size) {
  std::optional<XfsGeometry> xfs;
  if (fs_type == "xfs") xfs = xfs_geometry(mount_point);
  return combine_geometry(fs_type, device_size, xfs, statfs_bytes(mount_point));
}

}  // namespace trimd
