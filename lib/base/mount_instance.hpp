// Which mount a takeover belongs to. Mount ids in /proc/self/mountinfo are
// reused at once (an unmount and a mount get the same number), so trimd
// keeps the kernel's unique mount id (statx STATX_MNT_ID_UNIQUE, never reused
// while the machine runs), with the boot and the mount namespace it is valid
// in, and the superblock options it left. docs/takeover.md, "Which mount".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trimd {

struct MountInstance {
  std::string boot_id;               // /proc/sys/kernel/random/boot_id; empty = unknown
  std::uint64_t namespace_id = 0;    // the mount namespace mount_id is from; 0 = unknown
  std::uint64_t mount_id = 0;        // unique mount id; 0 = unknown (kernel before 6.8)
  std::vector<std::string> options;  // superblock options but any discard option
  bool operator==(const MountInstance&) const = default;
};

// The superblock options but discard, nodiscard and discard=...
std::vector<std::string> options_but_discard(const std::vector<std::string>& super_options);

// The mount at `mount_point` as this process sees it now.
MountInstance probe_mount_instance(const std::string& mount_point,
                                   const std::vector<std::string>& super_options);

// Whether a recorded mount is the one mounted now.
enum class MountMatch {
  Same,     // the same mount, as far as trimd can tell
  Other,    // unmounted and mounted again since, or a reboot
  Unknown,  // a record written before trimd kept mounts (1caa747), or no ids now
};
MountMatch match_mount(const MountInstance& recorded, const MountInstance& now);

}  // namespace trimd
