// From the mount table to the list of filesystems trimd tracks. Filters come
// from filters.hpp; this file only puts them in order.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "block_topology.hpp"
#include "discard_mode.hpp"
#include "fs_probe.hpp"
#include "fs_types.hpp"
#include "mountinfo.hpp"

namespace trimd {

// A filesystem trimd tracks (it has an object on the bus and a line in
// `trimctl status`), trimmable or not.
struct DiscoveredFs {
  // Stable across restarts: "uuid-<UUID>", else "dev-<source>-<mount point>";
  // for a clone, see tell_clones_apart().
  std::string id;
  MountEntry mount;
  std::string uuid;  // empty when unknown
  Topology topology;
  FsGeometry geometry;
  // The mount at the mount point when discovery looked (its mount id is
  // mountinfo's): FITRIM reaches this one or nothing. Anything else there
  // later is another filesystem, often the one underneath.
  MountIdentity identity;
  dev_t root_device = 0;  // identity.device, for the remounter
  // Tracked but never trimmed, with the reason: no discard support ...
  std::optional<std::string> unsupported_reason;
  // ... or opted out (X-trimd.skip, X-fstrim.notrim).
  std::optional<std::string> disabled_reason;
  bool in_fstab = false;  // /etc/fstab lists its mount point ([trim] scope)

  std::vector<std::string> disk_names() const;
  bool rotational() const;  // any backing disk spins
  DiscardMode discard_mode() const { return trimd::discard_mode(mount); }
  // Synchronous online discard only: btrfs discard=async is not that.
  bool inline_discard() const { return discard_mode() == DiscardMode::Sync; }
};

// A mount that is not a filesystem to trim at all (tmpfs, nfs, read-only,
// a bind mount of a filesystem already listed), with why.
struct SkippedMount {
  MountEntry mount;
  std::string reason;
};

struct Discovery {
  std::vector<DiscoveredFs> tracked;
  std::vector<SkippedMount> skipped;
};

Discovery discover_filesystems(const std::vector<MountEntry>& mounts,
                               const std::vector<FstabEntry>& fstab, BlockInventory& inventory,
                               FsProber& prober);

// The id used for state and object paths.
std::string filesystem_id(const std::string& uuid, const MountEntry& mount);

// Copies of one image (VM images, snapshots) share a UUID but are separate
// filesystems, each with its own state and cursor. When several tracked
// filesystems share a UUID, each gets clone_id(): "uuid-<UUID>-dev-<source>",
// which depends on that copy alone. A copy mounted alone is told apart by
// what the state file remembers (Manager::settle_clone_ids).
std::string clone_id(const std::string& uuid, const MountEntry& mount);
void tell_clones_apart(std::vector<DiscoveredFs>& tracked);

}  // namespace trimd
