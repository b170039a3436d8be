// The filesystem types trimd knows something about, as a type: the text
// from mountinfo ("ext4", "fuse.sshfs", ...) is read once, here.
#pragma once

#include <string_view>

namespace trimd {

enum class FsKind {
  Ext2,
  Ext3,
  Ext4,
  Xfs,
  Btrfs,
  F2fs,
  Vfat,
  Exfat,
  Ntfs3,
  Jfs,
  Gfs2,
  Ocfs2,
  Nilfs2,
  Other,  // anything else: trimmed with one whole-range call if at all
};

FsKind fs_kind(std::string_view fs_type);

// ext2/3/4: block groups of 8 × block-size blocks.
bool is_ext(FsKind kind);

// FITRIM's range is a plain byte range over [0, device size).
bool trims_linear_range(FsKind kind);

}  // namespace trimd
