// Which kind of online discard a mounted filesystem does, read from the
// superblock options in mountinfo. Pure: tests feed it captured lines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mountinfo.hpp"

namespace trimd {

enum class DiscardMode {
  None,   // no online discard: freed space waits for FITRIM
  Sync,   // every delete discards inside the transaction commit (the cost trimd avoids)
  Async,  // freed extents queued and discarded later in the background (btrfs discard=async)
};

// "sync", "async", "" (the DiscardMode bus property).
const char* to_string(DiscardMode mode);

// From the superblock options of a filesystem of `fs_type`. The last
// discard option wins, as the kernel applies them in order: ext4 and xfs
// `discard` is sync; btrfs `discard` and `discard=sync` are sync and
// `discard=async` is async; `nodiscard` is none.
DiscardMode discard_mode(std::string_view fs_type, const std::vector<std::string>& super_options);
DiscardMode discard_mode(const MountEntry& mount);

}  // namespace trimd
