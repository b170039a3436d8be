// What not to trim, as plain functions in the spirit of util-linux fstrim.
// Each returns a reason a person can read, or nothing when the mount passes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "block_topology.hpp"
#include "mountinfo.hpp"

namespace trimd {

using SkipReason = std::optional<std::string>;

SkipReason skip_read_only(const MountEntry& mount);
// proc, sysfs, tmpfs, cgroup, overlay, squashfs, ... and anything with no
// block device behind it.
SkipReason skip_pseudo_fs(const MountEntry& mount);
SkipReason skip_network_fs(const MountEntry& mount);  // nfs, cifs, ceph, 9p, ...
SkipReason skip_special_fs(const MountEntry& mount);  // swap, autofs, fuse.*
// Another mount sits exactly on this mount point, hiding it.
SkipReason skip_overmounted(const MountEntry& mount, const std::vector<MountEntry>& all);
// X-trimd.skip or X-fstrim.notrim in the mount options or the fstab entry.
SkipReason skip_opted_out(const MountEntry& mount, const std::vector<FstabEntry>& fstab);
SkipReason skip_no_discard(const Topology& topology);
// /run/host and below: what a container manager (systemd-nspawn, podman)
// mounts from the host into a container. The host trims its own filesystems.
SkipReason skip_container_host_mount(const MountEntry& mount);
// Whether /etc/fstab has an entry for the mount point (as fstrim's
// --listed-in /etc/fstab decides).
bool listed_in_fstab(const MountEntry& mount, const std::vector<FstabEntry>& fstab);

// Every filter above, in order; the first reason wins.
SkipReason first_skip_reason(const MountEntry& mount, const std::vector<MountEntry>& all,
                             const std::vector<FstabEntry>& fstab, const Topology& topology);

// Indexes into `mounts` with one entry per filesystem (superblock): bind mounts
// and btrfs subvolumes of the same filesystem are trimmed once. The mount of
// the filesystem's root ("/") wins, else the shortest mount point.
std::vector<std::size_t> one_mount_per_filesystem(const std::vector<MountEntry>& mounts);

}  // namespace trimd
