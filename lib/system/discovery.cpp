#include "discovery.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "filters.hpp"

namespace trimd {

std::vector<std::string> DiscoveredFs::disk_names() const {
  std::vector<std::string> names;
  for (const auto& disk : topology.disks) names.push_back(disk.name);
  return names;
}

bool DiscoveredFs::rotational() const {
  return std::any_of(topology.disks.begin(), topology.disks.end(),
                     [](const BlockDisk& d) { return d.rotational; });
}

std::string filesystem_id(const std::string& uuid, const MountEntry& mount) {
  if (!uuid.empty()) return "uuid-" + uuid;
  return "dev-" + mount.source + "-" + mount.mount_point;
}

std::string clone_id(const std::string& uuid, const MountEntry& mount) {
  return "uuid-" + uuid + "-dev-" + mount.source;
}

void tell_clones_apart(std::vector<DiscoveredFs>& tracked) {
  std::map<std::string, std::vector<DiscoveredFs*>> by_id;
  for (auto& fs : tracked) by_id[fs.id].push_back(&fs);
  for (auto& [id, same] : by_id) {
    if (same.size() < 2) continue;
    // The order does not depend on which copy was mounted first.
    std::sort(same.begin(), same.end(), [](const DiscoveredFs* a, const DiscoveredFs* b) {
      return std::tie(a->mount.source, a->mount.mount_point) <
             std::tie(b->mount.source, b->mount.mount_point);
    });
    // Every copy, the first too: an id that depends on which other copies
    // are mounted would pass one copy's record to another (issue 16, item 7).
    for (std::size_t i = 0; i < same.size(); ++i) {
      if (!same[i]->uuid.empty())
        same[i]->id = clone_id(same[i]->uuid, same[i]->mount);
      else if (i > 0)
        same[i]->id = id + "-" + std::to_string(i);
    }
  }
}

namespace {

constexpr const char* kNotThisMountNow = "another mount is at its mount point right now";

// Mounts that are no filesystem to trim at all: not tracked, only listed.
SkipReason not_a_trim_target(const MountEntry& mount, const std::vector<MountEntry>& all) {
  if (auto r = skip_pseudo_fs(mount)) return r;
  if (auto r = skip_network_fs(mount)) return r;
  if (auto r = skip_special_fs(mount)) return r;
  if (auto r = skip_container_host_mount(mount)) return r;
  if (auto r = skip_read_only(mount)) return r;
  if (auto r = skip_overmounted(mount, all)) return r;
  return std::nullopt;
}

// The mount at `mount`'s mount point, if it is that mount: mountinfo was read
// before, and meanwhile another filesystem may have been mounted there or the
// mount unmounted (then the path leads to the filesystem underneath).
std::optional<MountIdentity> identify(const MountEntry& mount, FsProber& prober) {
  const MountIdentity found = prober.identify(mount.mount_point);
  if (found.mount_id != mount.mount_id || found.device == 0) return std::nullopt;
  return found;
}

std::uint64_t device_size(const Topology& topology) {
  std::uint64_t size = 0;
  for (const auto& device : topology.devices) size += device.size_bytes;
  return size;
}

}  // namespace

Discovery discover_filesystems(const std::vector<MountEntry>& mounts,
                               const std::vector<FstabEntry>& fstab, BlockInventory& inventory,
                               FsProber& prober) {
  Discovery result;
  std::vector<MountEntry> candidates;
  std::vector<Topology> topologies;
  for (const auto& mount : mounts) {
    if (auto reason = not_a_trim_target(mount, mounts)) {
      result.skipped.push_back({mount, *reason});
      continue;
    }
    Topology topology = inventory.topology_of(mount);
    if (topology.devices.empty()) {
      result.skipped.push_back({mount, "no block device behind it"});
      continue;
    }
    candidates.push_back(mount);
    topologies.push_back(std::move(topology));
  }

  const auto keep = one_mount_per_filesystem(candidates);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (std::find(keep.begin(), keep.end(), i) == keep.end()) {
      result.skipped.push_back({candidates[i], "another mount of the same filesystem is trimmed"});
      continue;
    }
    const auto identity = identify(candidates[i], prober);
    if (!identity) {
      result.skipped.push_back({candidates[i], kNotThisMountNow});
      continue;
    }
    DiscoveredFs fs;
    fs.mount = candidates[i];
    fs.topology = std::move(topologies[i]);
    fs.uuid = prober.uuid(fs.mount.mount_point, fs.mount.source).value_or("");
    fs.id = filesystem_id(fs.uuid, fs.mount);
    fs.geometry = prober.geometry(fs.mount.mount_point, fs.mount.fs_type, device_size(fs.topology));
    // The probes looked by path too: what they saw must have been this mount.
    if (prober.identify(fs.mount.mount_point) != *identity) {
      result.skipped.push_back({candidates[i], kNotThisMountNow});
      continue;
    }
    fs.identity = *identity;
    fs.root_device = identity->device;
    fs.unsupported_reason = skip_no_discard(fs.topology);
    fs.disabled_reason = skip_opted_out(fs.mount, fstab);
    fs.in_fstab = listed_in_fstab(fs.mount, fstab);
    result.tracked.push_back(std::move(fs));
  }
  tell_clones_apart(result.tracked);
  return result;
}

}  // namespace trimd
