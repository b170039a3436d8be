// Parsers for /proc/self/mountinfo and /etc/fstab. They take text, not the
// live system, so tests feed them captured tables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trimd {

struct MountEntry {
  int mount_id = 0;
  int parent_id = 0;
  unsigned major = 0;  // st_dev of the superblock (0:N for btrfs, tmpfs, ...)
  unsigned minor = 0;
  std::string root;                          // path inside the filesystem that is mounted here
  std::string mount_point;                   // unescaped (\040 -> ' ')
  std::vector<std::string> mount_options;    // per mount: ro, noatime, ...
  std::vector<std::string> optional_fields;  // shared:N, master:N, ...
  std::string fs_type;                       // "ext4", "fuse.sshfs", ...
  std::string source;                        // "/dev/sda1", "tmpfs", ...
  std::vector<std::string> super_options;    // per superblock: discard, ...

  // True when `name` (or `name=...`) is among the mount or superblock options.
  bool has_option(std::string_view name) const;
  // "ro" in the superblock options. A read-only *mount* of a writable
  // filesystem still takes FITRIM (it is an ioctl on a read-only fd), and
  // under systemd's ProtectSystem=strict every mount in trimd's namespace is
  // read-only: judging by the mount would skip everything.
  bool read_only() const;
};

// Lines that do not parse are skipped: the kernel writes this file, and one
// odd line must not hide every other filesystem.
std::vector<MountEntry> parse_mountinfo(std::string_view text);

struct FstabEntry {
  std::string source;       // as written: UUID=..., /dev/..., LABEL=...
  std::string mount_point;  // unescaped
  std::string fs_type;
  std::vector<std::string> options;  // includes userspace ones (X-trimd.skip)
};

// Comments and blank lines are ignored; malformed lines are skipped.
std::vector<FstabEntry> parse_fstab(std::string_view text);

// Undo the octal escapes the kernel and fstab use for ' ', '\t', '\n', '\\'.
std::string unescape_octal(std::string_view text);

}  // namespace trimd
