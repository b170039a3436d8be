// What not to trim. The lists follow util-linux (libmount's pseudo and
// network filesystem tables, fstrim's own skips).
#include "filters.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <tuple>

namespace trimd {

namespace {

// No block device, or one that FITRIM cannot reach (read-only images,
// stacked views of other filesystems).
constexpr auto kPseudoFilesystems = std::to_array<std::string_view>({
    "anon_inodefs", "apparmorfs", "bdev",     "binder",  "binfmt_misc", "bpf",       "cgroup",
    "cgroup2",      "configfs",   "cpuset",   "cramfs",  "debugfs",     "devfs",     "devpts",
    "devtmpfs",     "dlmfs",      "efivarfs", "erofs",   "fusectl",     "hugetlbfs", "iso9660",
    "mqueue",       "nfsd",       "none",     "nsfs",    "overlay",     "pidfs",     "pipefs",
    "proc",         "pstore",     "ramfs",    "resctrl", "romfs",       "rootfs",    "rpc_pipefs",
    "securityfs",   "selinuxfs",  "smackfs",  "sockfs",  "squashfs",    "sysfs",     "tmpfs",
    "tracefs",      "udf",
});

constexpr auto kNetworkFilesystems = std::to_array<std::string_view>({
    "9p",    "afs", "ceph", "cifs",  "davfs", "gfs",  "gfs2",  "glusterfs", "lustre", "ncp",
    "ncpfs", "nfs", "nfs4", "ocfs2", "pvfs2", "smb3", "smbfs", "virtiofs",  "coda",
});

template <std::size_t N>
bool is_listed(const std::array<std::string_view, N>& list, std::string_view fs_type) {
  return std::find(list.begin(), list.end(), fs_type) != list.end();
}

// "fuse" and "fuse.<subtype>"; "fuseblk" (ntfs-3g, exfat-fuse) sits on a real
// block device and may well answer FITRIM, so it is left to the discard check.
bool is_fuse(std::string_view fs_type) { return fs_type == "fuse" || fs_type.starts_with("fuse."); }

// Userspace options in fstab and utab are spelled X-... or x-...
std::optional<std::string> find_opt_out(const std::vector<std::string>& options) {
  for (const auto& option : options) {
    if (option.size() < 2 || (option[0] != 'X' && option[0] != 'x') || option[1] != '-') continue;
    const std::string_view name = std::string_view{option}.substr(2);
    if (name == "trimd.skip" || name == "fstrim.notrim") return option;
  }
  return std::nullopt;
}

// fstab may write "/srv/" for the "/srv" the kernel reports.
std::string_view without_trailing_slashes(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

// Where `mount` sits in `all`: by address when it is an element, else by
// identity. npos when absent.
std::size_t position_in(const std::vector<MountEntry>& all, const MountEntry& mount) {
  for (std::size_t i = 0; i < all.size(); ++i)
    if (&all[i] == &mount) return i;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].mount_id == mount.mount_id && all[i].mount_point == mount.mount_point &&
        all[i].source == mount.source && all[i].root == mount.root)
      return i;
  return std::string::npos;
}

bool is_child_of(const MountEntry& child, const MountEntry& parent) {
  return parent.mount_id != 0 && child.parent_id == parent.mount_id &&
         child.mount_id != parent.mount_id;
}

std::string join_names(const std::vector<BlockDisk>& disks) {
  std::string names;
  for (const auto& disk : disks) {
    if (!names.empty()) names += ", ";
    names += disk.name.empty() ? std::to_string(disk.major) + ":" + std::to_string(disk.minor)
                               : disk.name;
  }
  return names;
}

}  // namespace

SkipReason skip_read_only(const MountEntry& mount) {
  if (mount.read_only()) return "read-only filesystem";
  return std::nullopt;
}

SkipReason skip_pseudo_fs(const MountEntry& mount) {
  if (is_listed(kPseudoFilesystems, mount.fs_type))
    return "pseudo filesystem (" + mount.fs_type + ")";
  return std::nullopt;
}

SkipReason skip_network_fs(const MountEntry& mount) {
  if (is_listed(kNetworkFilesystems, mount.fs_type))
    return "network filesystem (" + mount.fs_type + ")";
  return std::nullopt;
}

SkipReason skip_special_fs(const MountEntry& mount) {
  if (mount.fs_type == "swap") return "swap";
  if (mount.fs_type == "autofs") return "autofs";
  if (is_fuse(mount.fs_type)) return "FUSE filesystem (" + mount.fs_type + ")";
  return std::nullopt;
}

// The mount on top is the one a path lookup (and so FITRIM) reaches. With
// mount ids, the one on top is a child of the hidden one; without (tables
// written by hand), the later line wins, as the kernel lists mounts in the
// order they were made.
SkipReason skip_overmounted(const MountEntry& mount, const std::vector<MountEntry>& all) {
  const std::size_t self = position_in(all, mount);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const MountEntry& other = all[i];
    if (i == self || other.mount_point != mount.mount_point) continue;
    const bool later = self != std::string::npos && i > self && !is_child_of(mount, other);
    if (is_child_of(other, mount) || later)
      return "over-mounted by another mount at " + mount.mount_point;
  }
  return std::nullopt;
}

SkipReason skip_opted_out(const MountEntry& mount, const std::vector<FstabEntry>& fstab) {
  if (auto option = find_opt_out(mount.mount_options)) return "opted out with " + *option;
  if (auto option = find_opt_out(mount.super_options)) return "opted out with " + *option;
  const std::string_view mount_point = without_trailing_slashes(mount.mount_point);
  for (const auto& entry : fstab) {
    if (without_trailing_slashes(entry.mount_point) != mount_point) continue;
    if (auto option = find_opt_out(entry.options)) return "opted out with " + *option;
  }
  return std::nullopt;
}

bool listed_in_fstab(const MountEntry& mount, const std::vector<FstabEntry>& fstab) {
  const std::string_view mount_point = without_trailing_slashes(mount.mount_point);
  return std::any_of(fstab.begin(), fstab.end(), [&](const FstabEntry& entry) {
    return without_trailing_slashes(entry.mount_point) == mount_point;
  });
}

SkipReason skip_no_discard(const Topology& topology) {
  if (topology.devices.empty()) return "no block device";
  const bool any = std::any_of(topology.devices.begin(), topology.devices.end(),
                               [](const BlockDisk& device) { return device.supports_discard(); });
  if (any) return std::nullopt;
  return "no discard support on " + join_names(topology.devices) +
         " (queue/discard_max_bytes is 0)";
}

SkipReason skip_container_host_mount(const MountEntry& mount) {
  constexpr std::string_view kHostDir = "/run/host";
  const std::string_view path = without_trailing_slashes(mount.mount_point);
  if (path == kHostDir || (path.starts_with(kHostDir) && path[kHostDir.size()] == '/'))
    return "the host's mount inside a container (" + mount.mount_point + ")";
  return std::nullopt;
}

SkipReason first_skip_reason(const MountEntry& mount, const std::vector<MountEntry>& all,
                             const std::vector<FstabEntry>& fstab, const Topology& topology) {
  if (auto reason = skip_read_only(mount)) return reason;
  if (auto reason = skip_pseudo_fs(mount)) return reason;
  if (auto reason = skip_network_fs(mount)) return reason;
  if (auto reason = skip_special_fs(mount)) return reason;
  if (auto reason = skip_container_host_mount(mount)) return reason;
  if (auto reason = skip_overmounted(mount, all)) return reason;
  if (auto reason = skip_opted_out(mount, fstab)) return reason;
  return skip_no_discard(topology);
}

// 0:0 never names a superblock the kernel reports; such entries (made by
// hand) are each taken as a filesystem of their own.
std::vector<std::size_t> one_mount_per_filesystem(const std::vector<MountEntry>& mounts) {
  // Lower is better: the filesystem's root, then the shortest path, then the first line.
  const auto rank = [&mounts](std::size_t i) {
    return std::make_tuple(mounts[i].root != "/", mounts[i].mount_point.size(), i);
  };
  std::map<std::pair<unsigned, unsigned>, std::size_t> best;
  std::vector<std::size_t> unknown;
  for (std::size_t i = 0; i < mounts.size(); ++i) {
    if (mounts[i].major == 0 && mounts[i].minor == 0) {
      unknown.push_back(i);
      continue;
    }
    const auto [it, inserted] = best.try_emplace({mounts[i].major, mounts[i].minor}, i);
    if (!inserted && rank(i) < rank(it->second)) it->second = i;
  }
  std::vector<std::size_t> kept = unknown;
  for (const auto& [device, index] : best) kept.push_back(index);
  std::sort(kept.begin(), kept.end());  // keep the table's order
  return kept;
}

}  // namespace trimd
