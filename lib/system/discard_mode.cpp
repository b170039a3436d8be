// Sync or async online discard, by filesystem type and superblock options.
#include "discard_mode.hpp"

#include "fs_kind.hpp"

namespace trimd {

namespace {

// f2fs always queues its discards for a background thread; its `discard`
// is never issued inside the commit.
bool discards_in_background(std::string_view fs_type) { return fs_kind(fs_type) == FsKind::F2fs; }

DiscardMode mode_of_option(std::string_view fs_type, std::string_view option, DiscardMode current) {
  if (option == "nodiscard") return DiscardMode::None;
  if (option == "discard=async") return DiscardMode::Async;
  if (option == "discard=sync") return DiscardMode::Sync;
  if (option == "discard")
    return discards_in_background(fs_type) ? DiscardMode::Async : DiscardMode::Sync;
  return current;
}

}  // namespace

const char* to_string(DiscardMode mode) {
  switch (mode) {
    case DiscardMode::None: return "";
    case DiscardMode::Sync: return "sync";
    case DiscardMode::Async: return "async";
  }
  return "";
}

DiscardMode discard_mode(std::string_view fs_type, const std::vector<std::string>& super_options) {
  DiscardMode mode = DiscardMode::None;
  for (const auto& option : super_options) mode = mode_of_option(fs_type, option, mode);
  return mode;
}

DiscardMode discard_mode(const MountEntry& mount) {
  return discard_mode(mount.fs_type, mount.super_options);
}

}  // namespace trimd
