#include "fs_kind.hpp"

#include <array>
#include <utility>

namespace trimd {

namespace {

constexpr std::array<std::pair<std::string_view, FsKind>, 13> kNames = {{
    {"ext2", FsKind::Ext2},
    {"ext3", FsKind::Ext3},
    {"ext4", FsKind::Ext4},
    {"xfs", FsKind::Xfs},
    {"btrfs", FsKind::Btrfs},
    {"f2fs", FsKind::F2fs},
    {"vfat", FsKind::Vfat},
    {"exfat", FsKind::Exfat},
    {"ntfs3", FsKind::Ntfs3},
    {"jfs", FsKind::Jfs},
    {"gfs2", FsKind::Gfs2},
    {"ocfs2", FsKind::Ocfs2},
    {"nilfs2", FsKind::Nilfs2},
}};

}  // namespace

FsKind fs_kind(std::string_view fs_type) {
  for (const auto& [name, kind] : kNames)
    if (name == fs_type) return kind;
  return FsKind::Other;
}

bool is_ext(FsKind kind) {
  return kind == FsKind::Ext2 || kind == FsKind::Ext3 || kind == FsKind::Ext4;
}

bool trims_linear_range(FsKind kind) {
  return kind != FsKind::Xfs && kind != FsKind::Btrfs && kind != FsKind::Other;
}

}  // namespace trimd
