// The manager's part in taking over inline discard: it shows what the
// takeover controller decided and persists trimd's record of it.
#include "manager.hpp"
#include "manager_tracked.hpp"

namespace trimd {

void Manager::set_takeover(const std::string& id, const TakeoverView& view,
                           const std::optional<TakeoverRecord>& record, TimePoint now) {
  FsRecord& persisted = records_[id];
  if (persisted.taken_over != record) {
    persisted.taken_over = record;
    state_dirty_ = true;
  }
  Tracked* fs = find(id);
  if (!fs) return;
  persisted.mount_point = fs->fs.mount.mount_point;
  fs->takeover = view;
  if (!fs->pass) reschedule(*fs, now);
  notify(*fs, now);
}

}  // namespace trimd
