// Block topology from sysfs:
//   <sysfs>/dev/block/M:m   -> ../../devices/.../block/sda/sda1   (a symlink)
//   .../sda/sda1/partition     (present on partitions; the disk is the parent dir)
//   .../sda/queue/discard_*    (only whole disks have a queue dir)
//   .../dm-0/slaves/sda2       (stacked devices: dm, md; leaves have none)
//   <sysfs>/fs/btrfs/<fsid>/devices/loop2 -> ../../../../devices/virtual/block/loop2
#include "block_topology.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <string_view>

#include "fs_kind.hpp"

namespace trimd {

const char* to_string(DiscardQueueing queueing) {
  switch (queueing) {
    case DiscardQueueing::Exclusive: return "exclusive";
    case DiscardQueueing::Queued: return "queued";
    case DiscardQueueing::Unknown: break;
  }
  return "unknown";
}

namespace fs = std::filesystem;

namespace {

// dm on md on dm ... is a handful deep in practice; a cycle in a broken
// (or fake) tree must not hang the daemon.
constexpr int kMaxStackDepth = 16;

std::optional<std::string> read_first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::uint64_t read_number(const fs::path& path) {
  const auto line = read_first_line(path);
  if (!line) return 0;
  std::uint64_t value = 0;
  const auto first = line->find_first_not_of(" \t");
  if (first == std::string::npos) return 0;
  std::from_chars(line->data() + first, line->data() + line->size(), value);
  return value;
}

// The "dev" attribute: "8:1".
bool read_device_number(const fs::path& dir, unsigned& major, unsigned& minor) {
  const auto line = read_first_line(dir / "dev");
  if (!line) return false;
  const auto colon = line->find(':');
  if (colon == std::string::npos) return false;
  const char* begin = line->data();
  const char* end = begin + line->size();
  return std::from_chars(begin, begin + colon, major).ec == std::errc{} &&
         std::from_chars(begin + colon + 1, end, minor).ec == std::errc{};
}

bool is_partition(const fs::path& device_dir) {
  std::error_code error;
  return fs::exists(device_dir / "partition", error);
}

// A partition's disk is the directory it sits in.
fs::path whole_disk_dir(const fs::path& device_dir) {
  return is_partition(device_dir) ? device_dir.parent_path() : device_dir;
}

fs::path resolve(const fs::path& link) {
  std::error_code error;
  fs::path real = fs::canonical(link, error);
  return error ? fs::path{} : real;
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    entries.push_back(it->path());
  std::sort(entries.begin(), entries.end());
  return entries;
}

// libata's own word for how it sends TRIM to the drive on ATA port `port_dir`
// (.../ata3): its ata_device's "trim" (Linux 4.2 and later).
DiscardQueueing ata_trim_queueing(const fs::path& port_dir) {
  for (const auto& link : sorted_entries(port_dir)) {
    if (link.filename().string().rfind("link", 0) != 0) continue;
    for (const auto& dev : sorted_entries(link)) {
      const auto trim = read_first_line(dev / "ata_device" / dev.filename() / "trim");
      if (!trim) continue;
      if (*trim == "queued") return DiscardQueueing::Queued;
      if (*trim == "unqueued" || *trim == "forced_unqueued") return DiscardQueueing::Exclusive;
      return DiscardQueueing::Unknown;
    }
  }
  return DiscardQueueing::Unknown;
}

// NVMe's Deallocate is an ordinary queued command; a SATA drive's TRIM is
// queued only when libata says so. Anything else (SCSI UNMAP, virtio, loop,
// USB bridges) is not known here.
DiscardQueueing discard_queueing_of(const fs::path& disk_dir) {
  if (disk_dir.filename().string().rfind("nvme", 0) == 0) return DiscardQueueing::Queued;
  const fs::path real = resolve(disk_dir);
  fs::path port;
  for (fs::path at = real; !at.empty() && at != at.root_path(); at = at.parent_path()) {
    const std::string name = at.filename().string();
    if (name.size() > 3 && name.rfind("ata", 0) == 0 &&
        name.find_first_not_of("0123456789", 3) == std::string::npos) {
      port = at;
      break;
    }
  }
  return port.empty() ? DiscardQueueing::Unknown : ata_trim_queueing(port);
}

BlockDisk describe_dir(const fs::path& device_dir) {
  BlockDisk disk;
  if (!read_device_number(device_dir, disk.major, disk.minor)) return disk;
  disk.name = device_dir.filename().string();
  disk.size_bytes = read_number(device_dir / "size") * 512;  // always 512-byte sectors
  const fs::path queue = whole_disk_dir(device_dir) / "queue";
  disk.discard_granularity = read_number(queue / "discard_granularity");
  disk.discard_max_bytes = read_number(queue / "discard_max_bytes");
  disk.rotational = read_number(queue / "rotational") != 0;
  disk.discard_queueing = discard_queueing_of(whole_disk_dir(device_dir));
  return disk;
}

void add_unique(std::vector<BlockDisk>& disks, BlockDisk disk) {
  const bool known = std::any_of(disks.begin(), disks.end(), [&disk](const BlockDisk& d) {
    return d.major == disk.major && d.minor == disk.minor;
  });
  if (!known && !disk.name.empty()) disks.push_back(std::move(disk));
}

// Down through slaves/ to the devices nothing else is stacked under.
void collect_leaf_disks(const fs::path& device_dir, int depth, std::vector<BlockDisk>& leaves) {
  const fs::path disk_dir = whole_disk_dir(device_dir);
  const auto slaves = sorted_entries(disk_dir / "slaves");
  if (slaves.empty() || depth >= kMaxStackDepth) {
    add_unique(leaves, describe_dir(disk_dir));
    return;
  }
  for (const auto& slave : slaves)
    if (const fs::path real = resolve(slave); !real.empty())
      collect_leaf_disks(real, depth + 1, leaves);
}

struct DeviceNumber {
  unsigned major = 0;
  unsigned minor = 0;
};

std::optional<DeviceNumber> block_device_number_of(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return std::nullopt;
  return DeviceNumber{::major(st.st_rdev), ::minor(st.st_rdev)};
}

fs::path device_dir_by_number(const fs::path& sysfs_root, unsigned major, unsigned minor) {
  return resolve(sysfs_root / "dev" / "block" /
                 (std::to_string(major) + ":" + std::to_string(minor)));
}

// The sysfs directory of the device a filesystem sits on. Anonymous device
// numbers (btrfs: 0:N) say nothing, so the mount source is asked instead:
// stat() when it is a device node here, else its kernel name ("/dev/loop5"
// -> class/block/loop5), which also serves trees that are not this machine's.
fs::path device_dir_of(const fs::path& sysfs_root, const MountEntry& mount) {
  if (mount.major != 0) return device_dir_by_number(sysfs_root, mount.major, mount.minor);
  if (const auto number = block_device_number_of(mount.source)) {
    const fs::path real = device_dir_by_number(sysfs_root, number->major, number->minor);
    if (!real.empty()) return real;
  }
  if (!mount.source.starts_with("/dev/")) return {};
  const fs::path name = fs::path(mount.source).filename();
  if (name.empty()) return {};
  return resolve(sysfs_root / "class" / "block" / name);
}

// All members of the multi-device btrfs that `device_name` belongs to, or
// empty when sysfs lists no such filesystem.
std::vector<fs::path> btrfs_members_of(const fs::path& sysfs_root, const std::string& device_name) {
  for (const auto& fsid_dir : sorted_entries(sysfs_root / "fs" / "btrfs")) {
    const auto members = sorted_entries(fsid_dir / "devices");
    const bool found = std::any_of(members.begin(), members.end(), [&](const fs::path& member) {
      return member.filename() == device_name;
    });
    if (!found) continue;
    std::vector<fs::path> resolved;
    for (const auto& member : members)
      if (const fs::path real = resolve(member); !real.empty()) resolved.push_back(real);
    return resolved;
  }
  return {};
}

}  // namespace

SysfsBlockInventory::SysfsBlockInventory(fs::path sysfs_root)
    : sysfs_root_(std::move(sysfs_root)) {}

BlockDisk SysfsBlockInventory::describe(unsigned major, unsigned minor) const {
  const fs::path real = device_dir_by_number(sysfs_root_, major, minor);
  BlockDisk disk = real.empty() ? BlockDisk{} : describe_dir(real);
  disk.major = major;
  disk.minor = minor;
  return disk;
}

Topology SysfsBlockInventory::topology_of(const MountEntry& mount) {
  const fs::path device_dir = device_dir_of(sysfs_root_, mount);
  if (device_dir.empty()) return {};

  std::vector<fs::path> device_dirs;
  if (fs_kind(mount.fs_type) == FsKind::Btrfs)
    device_dirs = btrfs_members_of(sysfs_root_, device_dir.filename().string());
  if (device_dirs.empty()) device_dirs.push_back(device_dir);

  Topology topology;
  for (const auto& dir : device_dirs) {
    add_unique(topology.devices, describe_dir(dir));
    collect_leaf_disks(dir, 0, topology.disks);
  }
  if (topology.devices.empty()) return {};  // listed in sysfs, but unreadable
  // A stack whose slaves/ links do not resolve still has a disk: its own.
  if (topology.disks.empty())
    for (const auto& dir : device_dirs)
      add_unique(topology.disks, describe_dir(whole_disk_dir(dir)));
  return topology;
}

}  // namespace trimd
