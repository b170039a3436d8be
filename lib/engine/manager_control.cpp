// The manager's control calls (bus, --once) and what it tells about itself.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "manager.hpp"
#include "manager_tracked.hpp"
#include "planner.hpp"

namespace trimd {

// --- control --------------------------------------------------------------------

Manager::Tracked* Manager::find(const std::string& id) {
  auto it = filesystems_.find(id);
  return it == filesystems_.end() ? nullptr : it->second.get();
}

std::vector<Manager::Tracked*> Manager::select(const std::vector<std::string>& ids) {
  std::vector<Tracked*> out;
  if (ids.empty()) {
    for (auto& [id, fs] : filesystems_) out.push_back(fs.get());
    return out;
  }
  for (const auto& id : ids) {
    Tracked* fs = find(id);
    if (!fs) throw ManagerError(ManagerError::Kind::NotFound, "no filesystem with id " + id);
    out.push_back(fs);
  }
  return out;
}

void Manager::trim_now(const std::vector<std::string>& ids, bool ignore_idle, TimePoint now) {
  auto targets = select(ids);
  if (!ids.empty()) {
    for (Tracked* fs : targets)
      if (fs->unsupported || fs->fs.unsupported_reason)
        throw ManagerError(
            ManagerError::Kind::NotSupported,
            fs->fs.mount.mount_point + " cannot be trimmed: " + fs->untrimmable_reason());
  }
  for (Tracked* fs : targets) {
    if (ids.empty() && !fs->trimmable()) continue;
    if (!ids.empty() && !fs->trimmable()) {
      // Named explicitly: an admin's request overrides opting out by policy.
      spdlog::info("{}: trimming on request although {}", fs->fs.mount.mount_point,
                   fs->untrimmable_reason());
      fs->policy.enabled = true;
      fs->policy.skip_rotational = false;
      fs->policy.scope = TrimPolicy::Scope::Mounted;
      fs->fs.disabled_reason.reset();
    }
    fs->paused = false;
    if (fs->pass && !fs->pass->cancel_requested) {
      // Joins the pass under way; and no pause between chunks first.
      fs->pass->forced = true;
      fs->pass->ignore_idle = fs->pass->ignore_idle || ignore_idle;
      fs->pass->not_before = SteadyPoint::min();
    } else {
      // A new pass, after the cancelled one (if any) has reported back.
      const bool ignore = ignore_idle || (fs->request && fs->request->ignore_idle);
      fs->request = TrimRequest{ignore};
    }
    notify(*fs, now);
  }
  notify_manager();
}

void Manager::pause(const std::vector<std::string>& ids, TimePoint now) {
  if (ids.empty()) paused_all_ = true;
  for (Tracked* fs : select(ids)) {
    if (!fs->paused) spdlog::info("{}: paused", fs->fs.mount.mount_point);
    fs->paused = true;
    notify(*fs, now);
  }
  notify_manager();
}

// Resume of everything ends the global pause; Resume of named filesystems
// un-pauses those only: filesystems mounted later still start paused.
void Manager::resume(const std::vector<std::string>& ids, TimePoint now) {
  if (ids.empty()) paused_all_ = false;
  for (Tracked* fs : select(ids)) {
    if (fs->paused) spdlog::info("{}: resumed", fs->fs.mount.mount_point);
    fs->paused = false;
    notify(*fs, now);
  }
  notify_manager();
}

void Manager::cancel(const std::vector<std::string>& ids, TimePoint now) {
  for (Tracked* fs : select(ids)) {
    fs->request.reset();
    if (!fs->pass) continue;
    if (fs->in_flight)
      fs->pass->cancel_requested = true;  // finished when the chunk reports back
    else
      finish_pass(*fs, PassOutcome{PassResult::Cancelled, {}}, now);
    notify(*fs, now);
  }
  notify_manager();
}

void Manager::notify_freed(const std::string& id, std::uint64_t bytes, TimePoint now) {
  Tracked* fs = find(id);
  if (!fs) throw ManagerError(ManagerError::Kind::NotFound, "no filesystem with id " + id);
  if (!fs->trimmable())
    throw ManagerError(ManagerError::Kind::NotSupported,
                       fs->fs.mount.mount_point + " is not trimmed: " + fs->untrimmable_reason());
  spdlog::info("{}: {} freed; trimming at the next idle window", fs->fs.mount.mount_point,
               format_size(bytes));
  if (!fs->pass) fs->due = std::min(fs->due, now);
  notify(*fs, now);
}

// --- what it knows ----------------------------------------------------------------

std::optional<std::string> Manager::id_for_mount_point(std::string_view mount_point) const {
  for (const auto& [id, fs] : filesystems_)
    if (fs->fs.mount.mount_point == mount_point) return id;
  return std::nullopt;
}

FsStatus Manager::make_status(const Tracked& fs, TimePoint now) const {
  FsStatus s;
  s.id = fs.fs.id;
  s.mount_point = fs.fs.mount.mount_point;
  s.device = fs.fs.mount.source;
  s.fs_type = fs.fs.mount.fs_type;
  s.uuid = fs.fs.uuid;
  s.backing_disks = fs.fs.disk_names();
  s.size = fs.fs.geometry.size_bytes;
  s.inline_discard = fs.fs.inline_discard();
  s.discard_mode = fs.fs.discard_mode();
  s.takeover = fs.takeover;
  s.gentle = fs.pass && gentle_pace(*fs.pass);
  if (slot_required(fs)) s.fleet_backend = fs.policy.backend;
  s.fleet_slot_held = fs.slot.standing == FleetSlot::Standing::Held;
  auto rec = records_.find(fs.fs.id);
  if (rec != records_.end()) {
    s.last_trim_start = rec->second.last_start;
    s.last_trim_end = rec->second.last_end;
    s.last_result = rec->second.last_result;
    s.last_bytes_trimmed = rec->second.last_bytes;
    s.last_trimming = rec->second.last_trimming;
    s.last_waited = rec->second.last_waited;
    s.lifetime = rec->second.lifetime;
  }
  const auto& last = s.last_result;
  const bool last_succeeded = last && last->result == PassResult::Success;
  if (fs.pass)
    s.progress = pass_progress(fs.fs.geometry, fs.pass->cursor);
  else
    s.progress = last_succeeded ? 1.0 : 0.0;

  if (!fs.trimmable()) {
    s.state = fs.unsupported || fs.fs.unsupported_reason ? FsState::Unsupported : FsState::Disabled;
    s.state_reason = fs.untrimmable_reason();
  } else if (fs.paused) {
    s.state = FsState::Paused;
    s.state_reason = "paused on request";
    s.waiting_for = WaitingFor::Paused;
  } else if (fs.in_flight || (fs.pass && fs.pass->announced && !holds_up(fs.wait.reason))) {
    // A chunk in the kernel, or between two chunks of a pass that is not held up.
    s.state = FsState::Trimming;
  } else if (fs.pass || fs.request || now >= fs.due) {
    s.state = FsState::Waiting;
    const bool held = holds_up(fs.wait.reason);
    s.state_reason = held ? fs.wait.text() : "due";
    s.waiting_for = held ? fs.wait.reason : WaitingFor::Due;
    if (fs.wait.reason == WaitingFor::DisksBusy) {
      s.busy_disk = fs.wait.busy.disk;
      s.busy_limit = fs.wait.busy.limit;
    }
  } else if (last && last->result == PassResult::Failed) {
    s.state = FsState::Error;
    s.state_reason = last->text();
  } else {
    s.state = FsState::Scheduled;
  }
  if (fs.trimmable() && !fs.pass) s.next_trim = fs.due;
  s.duty = budget_of(fs).share;
  s.discard_busy = fs.discard_busy;
  pacing_status(fs, s, now);
  return s;
}

std::vector<FsStatus> Manager::statuses(TimePoint now) const {
  std::vector<FsStatus> out;
  for (const auto& [id, fs] : filesystems_) out.push_back(make_status(*fs, now));
  std::sort(out.begin(), out.end(),
            [](const FsStatus& a, const FsStatus& b) { return a.mount_point < b.mount_point; });
  return out;
}

std::optional<FsStatus> Manager::status(const std::string& id, TimePoint now) const {
  auto it = filesystems_.find(id);
  if (it == filesystems_.end()) return std::nullopt;
  return make_status(*it->second, now);
}

// "trimming" while a chunk is in flight or an unpaused pass can go on;
// otherwise "paused" when every trimmable filesystem is paused and something
// is (a paused filesystem, or the global pause that holds filesystems
// mounted later); otherwise "idle". A per-filesystem Resume or TrimNow
// after a global Pause therefore ends "paused" as soon as that filesystem
// can trim.
ManagerState Manager::state() const {
  bool trimming = false;
  bool all_paused = true;
  bool some_paused = paused_all_;
  for (const auto& [id, fs] : filesystems_) {
    if (fs->in_flight || (fs->pass && !fs->paused)) trimming = true;
    if (!fs->trimmable()) continue;
    if (fs->paused)
      some_paused = true;
    else
      all_paused = false;
  }
  if (trimming) return ManagerState::Trimming;
  return some_paused && all_paused ? ManagerState::Paused : ManagerState::Idle;
}

void Manager::notify(Tracked& fs, TimePoint now) {
  if (listeners_.empty()) return;
  FsStatus status = make_status(fs, now);
  if (fs.last_sent && *fs.last_sent == status) return;
  fs.last_sent = status;
  for (auto* listener : listeners_) listener->filesystem_changed(status);
}

std::vector<std::pair<std::string, PassHistoryEntry>> Manager::history(
    std::string_view mount_point) const {
  const FsRecord* newest = nullptr;
  const auto tracked = id_for_mount_point(mount_point);
  std::vector<std::pair<std::string, PassHistoryEntry>> out;
  for (const auto& [id, record] : records_) {
    if (mount_point.empty()) {
      for (const auto& entry : record.history) out.emplace_back(record.mount_point, entry);
      continue;
    }
    if (record.mount_point != mount_point) continue;
    // A mount point reused by another filesystem: the tracked one, else the
    // one trimmed last.
    const auto end = [](const FsRecord* r) { return r->last_end.value_or(TimePoint{}); };
    if (tracked ? id == *tracked : (!newest || end(&record) > end(newest))) newest = &record;
    if (tracked && id == *tracked) break;
  }
  if (mount_point.empty()) {
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.second.start < b.second.start; });
    return out;
  }
  if (!newest)
    throw ManagerError(ManagerError::Kind::NotFound,
                       "no filesystem remembered at " + std::string(mount_point));
  for (const auto& entry : newest->history) out.emplace_back(newest->mount_point, entry);
  return out;
}

void Manager::notify_manager() {
  auto current = std::make_pair(state(), totals_);
  if (current == last_manager_sent_) return;
  last_manager_sent_ = current;
  for (auto* listener : listeners_) listener->manager_changed();
}

}  // namespace trimd
