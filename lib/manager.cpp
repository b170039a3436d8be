#include "manager.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "planner.hpp"
#include "schedule.hpp"

namespace trimd {

namespace {

// A failed pass is retried sooner than a whole interval later.
constexpr Duration kRetryAfterFailure = std::chrono::hours{1};
// A filesystem that vanished mid-chunk is looked at again after this ...
constexpr Duration kRetryAfterGone = std::chrono::seconds{30};
// ... this many times in a row, then the pass fails (a mount point whose
// device keeps changing would otherwise be retried for ever).
constexpr unsigned kMaxGoneRetries = 3;

}  // namespace

const char* to_string(FsState state) {
  switch (state) {
    case FsState::Waiting: return "waiting";
    case FsState::Scheduled: return "scheduled";
    case FsState::Trimming: return "trimming";
    case FsState::Paused: return "paused";
    case FsState::Unsupported: return "unsupported";
    case FsState::Disabled: return "disabled";
    case FsState::Error: return "error";
  }
  return "unknown";
}

struct Manager::Tracked {
  DiscoveredFs fs;
  TrimPolicy policy;
  TimePoint due{};
  bool paused = false;
  bool unsupported = false;  // learned from FITRIM itself
  std::string unsupported_reason;
  bool vanished = false;  // gone from the mount table while a chunk ran
  unsigned gone_retries = 0;

  // The current pass.
  bool pass_active = false;
  std::uint64_t cursor = 0;
  TimePoint pass_start{};
  std::uint64_t pass_bytes_reported = 0;
  std::uint64_t pass_bytes_discarded = 0;
  bool discard_measured = true;
  unsigned chunks = 0;
  unsigned foreground_pauses = 0;  // times the pass stopped for foreground I/O
  bool forced = false;             // asked for (TrimNow, --once), not just due
  bool ignore_idle = false;
  bool cancel_requested = false;
  bool in_flight = false;
  bool waiting_for_idle = false;
  bool waiting_for_disk = false;
  bool gentle = false;
  TimePoint not_before{};
  std::string wait_reason;

  std::optional<FsStatus> last_sent;

  bool trimmable() const {
    return !unsupported && !fs.unsupported_reason && !fs.disabled_reason && policy.enabled &&
           !(policy.skip_rotational && fs.rotational());
  }
  std::string untrimmable_reason() const {
    if (unsupported) return unsupported_reason;
    if (fs.unsupported_reason) return *fs.unsupported_reason;
    if (fs.disabled_reason) return *fs.disabled_reason;
    if (!policy.enabled) return "disabled in the configuration";
    if (policy.skip_rotational && fs.rotational()) return "rotational disk (skip_rotational)";
    return {};
  }
};

Manager::Manager(Config config, StateMap state, TimePoint now)
    : config_(std::move(config)), records_(std::move(state)), idleness_(config_.idle),
      started_at_(now) {}

Manager::~Manager() = default;

void Manager::set_config(Config config, TimePoint now) {
  config_ = std::move(config);
  idleness_.set_thresholds(config_.idle);
  for (auto& [id, fs] : filesystems_) {
    apply_policy(*fs, now);
    notify(*fs, now);
  }
}

// --- filesystems --------------------------------------------------------------

void Manager::apply_policy(Tracked& fs, TimePoint now) {
  fs.policy = config_.policy_for(fs.fs.mount.mount_point, fs.fs.uuid, fs.fs.mount.fs_type);
  if (!fs.pass_active) reschedule(fs, now);
}

void Manager::reschedule(Tracked& fs, TimePoint now) {
  const FsRecord& record = records_[fs.fs.id];
  std::optional<TimePoint> last_end = record.last_end;
  const SchedulePolicy& schedule = fs.policy.schedule;
  if (last_end && record.last_result.rfind("failed", 0) == 0) {
    fs.due = std::max(*last_end + std::min(kRetryAfterFailure, schedule.interval), now);
    return;
  }
  const double jitter = stable_jitter(fs.fs.id, last_end ? to_usec(*last_end) : 0);
  fs.due = next_due(schedule, last_end, started_at_, jitter);
}

void Manager::update_filesystems(std::vector<DiscoveredFs> found, TimePoint now) {
  std::set<std::string> seen;
  for (auto& discovered : found) {
    seen.insert(discovered.id);
    auto it = filesystems_.find(discovered.id);
    if (it != filesystems_.end()) {
      Tracked& fs = *it->second;
      fs.vanished = false;
      fs.fs = std::move(discovered);
      apply_policy(fs, now);
      notify(fs, now);
      continue;
    }
    auto fs = std::make_unique<Tracked>();
    fs->fs = std::move(discovered);

    fs->paused = paused_all_;
    FsRecord& record = records_[fs->fs.id];
    record.mount_point = fs->fs.mount.mount_point;
    apply_policy(*fs, now);
    if (fs->trimmable())
      spdlog::info("{}: tracking {} on {}", fs->fs.mount.mount_point, fs->fs.mount.fs_type,
                   fs->fs.mount.source);
    else
      spdlog::warn("{}: not trimming {} on {}: {}", fs->fs.mount.mount_point,
                   fs->fs.mount.fs_type, fs->fs.mount.source, fs->untrimmable_reason());
    if (record.cursor && fs->trimmable()) {
      // An unfinished pass from before a restart: go on where it stopped.
      fs->pass_active = true;
      fs->cursor = *record.cursor;
      fs->pass_start = record.pass_start.value_or(now);
      fs->pass_bytes_discarded = record.pass_bytes;
      spdlog::info("{}: resuming the unfinished pass at offset {}", fs->fs.mount.mount_point,
                   fs->cursor);
    }
    Tracked& ref = *fs;
    filesystems_.emplace(ref.fs.id, std::move(fs));
    FsStatus status = make_status(ref, now);
    ref.last_sent = status;
    if (listener_) listener_->filesystem_added(status);
  }
  for (auto it = filesystems_.begin(); it != filesystems_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second->in_flight) {
      // Its chunk reports back first (most likely as Gone); removed then.
      it->second->vanished = true;
      ++it;
      continue;
    }
    forget_vanished(*it->second);
    std::string id = it->first;
    it = filesystems_.erase(it);
    if (listener_) listener_->filesystem_removed(id);
  }
  notify_manager();
}

// Unmounted: its state record (and the cursor of a pass) stays for when it
// comes back; a pass it was in is reported as not completed.
void Manager::forget_vanished(Tracked& fs) {
  if (fs.pass_active) {
    spdlog::warn("{}: unmounted during a trim pass; it resumes at offset {} when mounted again",
                 fs.fs.mount.mount_point, fs.cursor);
    finished_[fs.fs.id] = "interrupted: unmounted during the pass";
  } else {
    spdlog::info("{}: no longer mounted", fs.fs.mount.mount_point);
  }
}

void Manager::observe_diskstats(const std::vector<DiskStat>& sample, TimePoint now) {
  idleness_.observe(sample, now);
}

// --- the trimming loop ----------------------------------------------------------

bool Manager::disks_free(const Tracked& fs) const {
  for (const auto& disk : fs.fs.disk_names())
    if (busy_disks_.count(disk)) return false;
  return true;
}

bool Manager::wants_to_run(const Tracked& fs, TimePoint now) const {
  return fs.pass_active || fs.forced || now >= fs.due;
}

void Manager::start_pass(Tracked& fs, TimePoint now) {
  fs.pass_active = true;
  fs.cursor = 0;
  fs.pass_start = now;
  fs.pass_bytes_reported = 0;
  fs.pass_bytes_discarded = 0;
  fs.discard_measured = true;
  fs.chunks = 0;
  fs.foreground_pauses = 0;
  fs.cancel_requested = false;
  spdlog::info("{}: trim pass starting ({}, {} in chunks of {})", fs.fs.mount.mount_point,
               fs.fs.mount.fs_type, format_size(fs.fs.geometry.size_bytes),
               format_size(fs.policy.chunk_bytes));
  record_progress(fs);
  if (listener_) listener_->trim_started(fs.fs.id);
}

std::optional<ChunkJob> Manager::next_job(Tracked& fs, TimePoint now) {
  if (fs.in_flight || fs.paused || !fs.trimmable() || !wants_to_run(fs, now)) return std::nullopt;
  if (!fs.forced && !in_window(fs.policy.schedule.window, now)) {
    fs.wait_reason = "outside the trim window";
    return std::nullopt;
  }
  if (!fs.pass_active) start_pass(fs, now);
  if (now < fs.not_before) return std::nullopt;

  const bool idle = fs.ignore_idle || idleness_.all_idle(fs.fs.disk_names(), now);
  const bool gentle = !idle && is_overdue(fs.policy.schedule, fs.due, now);
  if (!idle && !gentle) {
    if (!fs.waiting_for_idle && fs.chunks > 0) {
      ++fs.foreground_pauses;
      spdlog::debug("{}: foreground I/O, pausing the pass", fs.fs.mount.mount_point);
    }
    fs.waiting_for_idle = true;
    fs.wait_reason = "waiting for the disks to go idle";
    return std::nullopt;
  }
  if (gentle && !fs.gentle)
    spdlog::warn("{}: overdue since {}; trimming gently although the disks are busy",
                 fs.fs.mount.mount_point, format_duration(std::chrono::duration_cast<Duration>(
                                              now - fs.due)));
  fs.gentle = gentle;
  fs.waiting_for_idle = false;
  fs.waiting_for_disk = !disks_free(fs);
  if (fs.waiting_for_disk) {
    fs.wait_reason = "another filesystem on the same disk is being trimmed";
    return std::nullopt;
  }
  const std::uint64_t chunk_bytes = gentle ? fs.policy.gentle_chunk_bytes : fs.policy.chunk_bytes;
  auto range = next_chunk(fs.fs.geometry, fs.cursor, chunk_bytes, fs.policy.min_extent_bytes);
  if (!range) {
    finish_pass(fs, "success", now);
    return std::nullopt;
  }
  fs.wait_reason.clear();
  ChunkJob job;
  job.serial = next_serial_++;
  job.fs_id = fs.fs.id;
  job.target = TrimTarget{fs.fs.mount.mount_point, fs.fs.root_device};
  job.range = *range;
  job.disks = fs.fs.disk_names();
  for (const auto& disk : job.disks) busy_disks_.insert(disk);
  fs.in_flight = true;
  spdlog::debug("{}: chunk {} at offset {} length {}{}", fs.fs.mount.mount_point, fs.chunks + 1,
                job.range.start, job.range.len, gentle ? " (gentle)" : "");
  return job;
}

std::vector<ChunkJob> Manager::take_jobs(TimePoint now) {
  std::vector<ChunkJob> jobs;
  if (stopping_) return jobs;
  // Most overdue first, so one disk shared by two filesystems serves the
  // one that has waited longest.
  std::vector<Tracked*> order;
  for (auto& [id, fs] : filesystems_) order.push_back(fs.get());
  std::stable_sort(order.begin(), order.end(),
                   [](const Tracked* a, const Tracked* b) { return a->due < b->due; });
  for (Tracked* fs : order) {
    if (auto job = next_job(*fs, now)) jobs.push_back(std::move(*job));
    notify(*fs, now);
  }
  notify_manager();
  return jobs;
}

void Manager::record_progress(Tracked& fs) {
  FsRecord& record = records_[fs.fs.id];
  record.mount_point = fs.fs.mount.mount_point;
  if (fs.pass_active) {
    record.cursor = fs.cursor;
    record.pass_start = fs.pass_start;
    record.pass_bytes = fs.pass_bytes_discarded;
  } else {
    record.cursor.reset();
    record.pass_start.reset();
    record.pass_bytes = 0;
  }
  state_dirty_ = true;
}

void Manager::chunk_finished(const ChunkJob& job, const ChunkResult& result, TimePoint now) {
  for (const auto& disk : job.disks) busy_disks_.erase(disk);
  Tracked* found = find(job.fs_id);
  if (!found) return;
  Tracked& fs = *found;
  fs.in_flight = false;
  const TrimOutcome& outcome = result.outcome;
  const std::string& where = fs.fs.mount.mount_point;

  switch (outcome.status) {
    case TrimStatus::Ok: {
      fs.gone_retries = 0;
      ++fs.chunks;
      fs.pass_bytes_reported += outcome.bytes_reported;
      if (result.bytes_discarded)
        fs.pass_bytes_discarded += *result.bytes_discarded;
      else
        fs.discard_measured = false;
      const std::uint64_t end = job.range.start + std::min(job.range.len,
          std::numeric_limits<std::uint64_t>::max() - job.range.start);
      fs.cursor = end;
      Duration pause = fs.gentle ? fs.policy.gentle_pause : fs.policy.chunk_pause;
      if (fs.policy.rate_limit_bytes_per_sec > 0 && job.range.len < (1ull << 62)) {
        // The range, not the bytes discarded, is what the rate limits: the
        // cost of a FITRIM call grows with the range it scans.
        const auto budget = std::chrono::microseconds{static_cast<std::int64_t>(
            static_cast<double>(job.range.len) * 1e6 /
            static_cast<double>(fs.policy.rate_limit_bytes_per_sec))};
        pause = std::max(pause, budget - result.elapsed);
      }
      fs.not_before = now + pause;
      if (fs.cursor >= pass_end(fs.fs.geometry)) {
        finish_pass(fs, "success", now);
      } else {
        record_progress(fs);
      }
      break;
    }
    case TrimStatus::PastEnd:
      finish_pass(fs, "success", now);
      break;
    case TrimStatus::Unsupported:
      spdlog::warn("{}: {}; not trimming it again", where, outcome.message);
      fs.unsupported = true;
      fs.unsupported_reason = outcome.message;
      finish_pass(fs, "unsupported", now);
      break;
    case TrimStatus::Gone:
      if (++fs.gone_retries > kMaxGoneRetries) {
        spdlog::error("{}: {}; giving up on this pass", where, outcome.message);
        finish_pass(fs, "failed: " + outcome.message, now);
        break;
      }
      spdlog::warn("{}: {}; retrying in {}", where, outcome.message,
                   format_duration(kRetryAfterGone));
      fs.not_before = now + kRetryAfterGone;
      record_progress(fs);
      break;
    case TrimStatus::Error:
      spdlog::error("{}: {}", where, outcome.message);
      finish_pass(fs, "failed: " + outcome.message, now);
      break;
  }
  if (fs.pass_active && fs.cancel_requested) finish_pass(fs, "cancelled", now);

  if (fs.vanished) {
    forget_vanished(fs);
    std::string id = fs.fs.id;
    filesystems_.erase(id);
    if (listener_) listener_->filesystem_removed(id);
  } else {
    notify(fs, now);
  }
  notify_manager();
}

void Manager::finish_pass(Tracked& fs, const std::string& result, TimePoint now) {
  const auto elapsed = std::chrono::duration_cast<Duration>(now - fs.pass_start);
  const std::uint64_t bytes =
      fs.discard_measured ? fs.pass_bytes_discarded : fs.pass_bytes_reported;
  FsRecord& record = records_[fs.fs.id];
  record.last_start = fs.pass_start;
  record.last_end = now;
  record.last_result = result;
  record.last_bytes = bytes;
  fs.pass_active = false;
  fs.forced = false;
  fs.ignore_idle = false;
  fs.cancel_requested = false;
  fs.gentle = false;
  fs.waiting_for_idle = false;
  fs.waiting_for_disk = false;
  fs.wait_reason.clear();
  record_progress(fs);
  reschedule(fs, now);
  bytes_trimmed_total_ += bytes;
  finished_[fs.fs.id] = result;

  auto log = result == "success" ? spdlog::level::info : spdlog::level::warn;
  spdlog::log(log,
              "{}: trim pass {}: {} discarded (FITRIM reported {}) in {}, {} chunks, {} pauses for "
              "foreground I/O",
              fs.fs.mount.mount_point, result, format_size(fs.pass_bytes_discarded),
              format_size(fs.pass_bytes_reported), format_duration(elapsed), fs.chunks,
              fs.foreground_pauses);
  if (listener_) listener_->trim_finished(fs.fs.id, result, bytes, elapsed);
}

TimePoint Manager::next_wakeup(TimePoint now) const {
  TimePoint wake = now + std::chrono::hours{1};
  for (const auto& [id, fs] : filesystems_) {
    if (!fs->trimmable() || fs->paused || fs->in_flight) continue;
    // Waiting for idle disks or a busy disk: the next diskstats sample or
    // the other chunk's completion wakes the loop, not a timer.
    if (fs->waiting_for_idle || fs->waiting_for_disk) continue;
    const bool running = fs->pass_active || fs->forced;
    TimePoint t = running ? std::max(fs->not_before, now) : fs->due;
    if (!fs->forced && fs->policy.schedule.window)
      t = next_window_start(fs->policy.schedule.window, std::max(t, now));
    wake = std::min(wake, t);
  }
  return std::max(wake, now);
}

void Manager::stop() { stopping_ = true; }

bool Manager::passes_active() const {
  for (const auto& [id, fs] : filesystems_)
    if (fs->pass_active || fs->in_flight || (fs->forced && fs->trimmable())) return true;
  return false;
}

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
        throw ManagerError(ManagerError::Kind::NotSupported,
                           fs->fs.mount.mount_point + " cannot be trimmed: " +
                               fs->untrimmable_reason());
  }
  for (Tracked* fs : targets) {
    if (ids.empty() && !fs->trimmable()) continue;
    if (!ids.empty() && !fs->trimmable()) {
      // Named explicitly: an admin's request overrides opting out by policy.
      spdlog::info("{}: trimming on request although {}", fs->fs.mount.mount_point,
                   fs->untrimmable_reason());
      fs->policy.enabled = true;
      fs->policy.skip_rotational = false;
      fs->fs.disabled_reason.reset();
    }
    fs->forced = true;
    fs->ignore_idle = fs->ignore_idle || ignore_idle;
    fs->paused = false;
    fs->not_before = std::min(fs->not_before, now);
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
    fs->forced = false;
    if (!fs->pass_active) continue;
    if (fs->in_flight)
      fs->cancel_requested = true;  // finished when the chunk reports back
    else
      finish_pass(*fs, "cancelled", now);
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
  if (!fs->pass_active) fs->due = std::min(fs->due, now);
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
  s.gentle = fs.gentle;
  auto rec = records_.find(fs.fs.id);
  if (rec != records_.end()) {
    s.last_trim_start = rec->second.last_start;
    s.last_trim_end = rec->second.last_end;
    s.last_result = rec->second.last_result;
    s.last_bytes_trimmed = rec->second.last_bytes;
  }
  if (fs.pass_active)
    s.progress = pass_progress(fs.fs.geometry, fs.cursor);
  else
    s.progress = s.last_result == "success" ? 1.0 : 0.0;

  if (!fs.trimmable()) {
    s.state = fs.unsupported || fs.fs.unsupported_reason ? FsState::Unsupported : FsState::Disabled;
    s.state_reason = fs.untrimmable_reason();
  } else if (fs.paused) {
    s.state = FsState::Paused;
    s.state_reason = "paused on request";
  } else if (fs.in_flight || (fs.pass_active && !fs.waiting_for_idle && fs.wait_reason.empty())) {
    s.state = FsState::Trimming;
  } else if (fs.pass_active || fs.forced || now >= fs.due) {
    s.state = FsState::Waiting;
    s.state_reason = fs.wait_reason.empty() ? "due" : fs.wait_reason;
  } else if (s.last_result.rfind("failed", 0) == 0) {
    s.state = FsState::Error;
    s.state_reason = s.last_result;
  } else {
    s.state = FsState::Scheduled;
  }
  if (fs.trimmable() && !fs.pass_active) s.next_trim = fs.due;
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

std::string Manager::state() const {
  bool any = false;
  bool all_paused = !filesystems_.empty();
  for (const auto& [id, fs] : filesystems_) {
    if (fs->in_flight || (fs->pass_active && !fs->paused)) any = true;
    if (fs->trimmable() && !fs->paused) all_paused = false;
  }
  if (paused_all_ || (all_paused && !any && !filesystems_.empty() &&
                      std::any_of(filesystems_.begin(), filesystems_.end(),
                                  [](const auto& e) { return e.second->paused; })))
    return "paused";
  return any ? "trimming" : "idle";
}

void Manager::notify(Tracked& fs, TimePoint now) {
  if (!listener_) return;
  FsStatus status = make_status(fs, now);
  if (fs.last_sent && *fs.last_sent == status) return;
  fs.last_sent = status;
  listener_->filesystem_changed(status);
}

void Manager::notify_manager() {
  std::string current = state() + "/" + std::to_string(bytes_trimmed_total_);
  if (current == last_manager_state_) return;
  last_manager_state_ = current;
  if (listener_) listener_->manager_changed();
}

}  // namespace trimd
