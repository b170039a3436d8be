// Which state record is whose when copies of one image (same UUID) come and
// go: each copy's id depends on that copy alone, never on which other copies
// happen to be mounted (issue 16, item 7).
#include <spdlog/spdlog.h>

#include "manager.hpp"

namespace trimd {

namespace {

std::string plain_id(const std::string& uuid) { return "uuid-" + uuid; }

// A record under a clone id ("uuid-<UUID>-dev-<source>") says that trimd has
// seen copies of this UUID side by side.
bool seen_as_clones(const StateMap& records, const std::string& uuid) {
  const std::string prefix = plain_id(uuid) + "-dev-";
  const auto it = records.lower_bound(prefix);
  return it != records.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

// Whether the record under the plain id was written for this copy: the
// device it was last seen on, or (a record without one, from before trimd
// kept it) the mount point.
bool plain_record_is_of(const FsRecord& record, const DiscoveredFs& fs) {
  if (!record.device.empty()) return record.device == fs.mount.source;
  return !record.mount_point.empty() && record.mount_point == fs.mount.mount_point;
}

}  // namespace

void Manager::settle_clone_ids(std::vector<DiscoveredFs>& found) {
  for (auto& fs : found) {
    if (fs.uuid.empty()) continue;
    const std::string plain = plain_id(fs.uuid);
    if (fs.id == plain && seen_as_clones(records_, fs.uuid)) fs.id = clone_id(fs.uuid, fs.mount);
    if (fs.id == plain || filesystems_.count(fs.id)) continue;
    // The record a copy had before its clones were seen goes along with it.
    const auto old = records_.find(plain);
    if (old == records_.end() || !plain_record_is_of(old->second, fs) || records_.count(fs.id))
      continue;
    spdlog::info("{}: a copy of UUID {} is mounted too; its state is kept under id {}",
                 fs.mount.mount_point, fs.uuid, fs.id);
    auto node = records_.extract(old);
    node.key() = fs.id;
    records_.insert(std::move(node));
    state_dirty_ = true;
  }
}

}  // namespace trimd
