// What the kernel's mount table says about a test's mount point, read with
// trimd's own mountinfo parser (tested on its own on captured tables).
#pragma once

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "discard_mode.hpp"
#include "mountinfo.hpp"

namespace trimd::test {

// The topmost entry for `mount_point` in a mountinfo file (this process's by
// default: the mount namespace the test runs in, outside trimd's).
inline std::optional<MountEntry> mount_entry_at(
    const std::string& mount_point, const std::string& mountinfo = "/proc/self/mountinfo") {
  std::ifstream in(mountinfo);
  std::stringstream text;
  text << in.rdbuf();
  std::optional<MountEntry> found;
  for (auto& entry : parse_mountinfo(text.str()))
    if (entry.mount_point == mount_point) found = std::move(entry);
  return found;
}

// The superblock options but any discard option: what a takeover must leave
// exactly as it was.
inline std::vector<std::string> super_options_but_discard(const MountEntry& entry) {
  std::vector<std::string> kept;
  for (const auto& option : entry.super_options)
    if (option != "discard" && option != "nodiscard" && option.rfind("discard=", 0) != 0)
      kept.push_back(option);
  return kept;
}

inline DiscardMode discard_mode_at(const std::string& mount_point) {
  const auto entry = mount_entry_at(mount_point);
  return entry ? discard_mode(*entry) : DiscardMode::None;
}

}  // namespace trimd::test
