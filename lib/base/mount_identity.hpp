// Which mount a path is, as the kernel answers for one open file: what
// discovery decides to trim, and what the FITRIM runner checks on the very
// fd it trims through. A mount point is only a name: another filesystem can
// be mounted on it or unmounted from it between any two system calls, and
// then the name leads to the filesystem underneath (docs/design.md).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace trimd {

struct MountIdentity {
  dev_t device = 0;             // st_dev of the mount's root (btrfs: the subvolume's)
  int mount_id = 0;             // mountinfo's first field (statx STATX_MNT_ID)
  std::uint64_t unique_id = 0;  // STATX_MNT_ID_UNIQUE, never reused (Linux 6.8+); 0: unknown
  std::int64_t fs_magic = 0;    // statfs f_type
  bool operator==(const MountIdentity&) const = default;
};

// The first way `found` differs from `expected`; fields of `expected` that
// are 0 are not checked (0 everywhere: nothing is).
enum class IdentityMismatch { None, Device, MountId, UniqueId, FsType };
IdentityMismatch compare_identity(const MountIdentity& expected, const MountIdentity& found);

// The functions below make system calls only, no allocation: a forked child
// may call them. Each returns -1 or false with errno set on failure.

// Opens the directory `path` without following a symbolic link in any of its
// components (openat2 RESOLVE_NO_SYMLINKS; O_NOFOLLOW on kernels without it).
// `flags` adds to O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC.
int open_directory_nofollow(const char* path, int flags) noexcept;

// The identity of the mount `fd` lies on, from statx(AT_EMPTY_PATH) and fstatfs.
bool read_mount_identity(int fd, MountIdentity& out) noexcept;

// The root of a detached copy of the mount `fd` lies on (open_tree
// OPEN_TREE_CLONE), opened O_RDONLY: the same superblock through a mount of
// its own, in no namespace, so this file does not keep the original mount
// busy for umount.
int clone_mount(int fd) noexcept;

// Whether clone_mount works here (kernel, seccomp filter, privileges):
// tried once on the root directory, the copy closed again.
bool can_clone_mounts() noexcept;

}  // namespace trimd
