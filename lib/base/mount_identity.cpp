#include "mount_identity.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>

// Linux 6.8; Debian 12's kernel headers (6.1) lack it. Asked for instead of
// STATX_MNT_ID, it makes stx_mnt_id the 64-bit id no other mount ever gets.
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
// <linux/mount.h> clashes with glibc's <sys/mount.h>; these two are ABI.
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif

namespace trimd {

IdentityMismatch compare_identity(const MountIdentity& expected, const MountIdentity& found) {
  if (expected.device != 0 && found.device != expected.device) return IdentityMismatch::Device;
  if (expected.mount_id != 0 && found.mount_id != expected.mount_id)
    return IdentityMismatch::MountId;
  if (expected.unique_id != 0 && found.unique_id != expected.unique_id)
    return IdentityMismatch::UniqueId;
  if (expected.fs_magic != 0 && found.fs_magic != expected.fs_magic)
    return IdentityMismatch::FsType;
  return IdentityMismatch::None;
}

int open_directory_nofollow(const char* path, int flags) noexcept {
  struct open_how how {};
  how.flags = static_cast<std::uint64_t>(flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  how.resolve = RESOLVE_NO_SYMLINKS;
  const long fd = ::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
  return ::open(path, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

bool read_mount_identity(int fd, MountIdentity& out) noexcept {
  constexpr int kFlags = AT_EMPTY_PATH | AT_STATX_DONT_SYNC;
  struct statx st {};
  if (::statx(fd, "", kFlags, STATX_TYPE | STATX_MNT_ID, &st) != 0) return false;
  out = MountIdentity{};
  out.device = makedev(st.stx_dev_major, st.stx_dev_minor);
  if (st.stx_mask & STATX_MNT_ID) out.mount_id = static_cast<int>(st.stx_mnt_id);
  // One stx_mnt_id field: the unique id takes a second call on the same fd.
  struct statx unique {};
  if (::statx(fd, "", kFlags, STATX_MNT_ID_UNIQUE, &unique) == 0 &&
      (unique.stx_mask & STATX_MNT_ID_UNIQUE))
    out.unique_id = unique.stx_mnt_id;
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return false;
  out.fs_magic = static_cast<std::int64_t>(fs.f_type);
  return true;
}

int clone_mount(int fd) noexcept {
  const int tree = static_cast<int>(
      ::syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
  if (tree < 0) return -1;
  // open_tree gives an O_PATH fd, which takes no ioctl (EBADF): open the
  // copy's root through it. That file keeps the copy, and so the
  // superblock, alive once `tree` is closed.
  const int root = ::openat(tree, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int error = errno;
  ::close(tree);
  errno = error;
  return root;
}

bool can_clone_mounts() noexcept {
  const int root = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return false;
  const int copy = clone_mount(root);
  ::close(root);
  if (copy < 0) return false;
  ::close(copy);
  return true;
}

}  // namespace trimd
