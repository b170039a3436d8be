// The manager's trimming loop: which filesystem is due, which chunk goes
// next, what a finished chunk means.
#include "manager.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "chunk_sizing.hpp"
#include "manager_tracked.hpp"
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
  if (const auto soon = first_pass_after_takeover(record)) fs.due = std::min(fs.due, *soon);
}

void Manager::update_filesystems(std::vector<DiscoveredFs> found, TimePoint now) {
  std::set<std::string> seen;
  for (auto& discovered : found) {
    seen.insert(discovered.id);
    records_[discovered.id].last_seen = now;  // for prune_unseen()
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
    if (record.cursor && fs->trimmable() && !cursor_in_range(fs->fs.geometry, *record.cursor)) {
      spdlog::warn("{}: the saved cursor {} lies beyond the filesystem; its pass starts over",
                   fs->fs.mount.mount_point, *record.cursor);
      record.cursor = 0;
      record.pass_start.reset();
      record.pass_bytes = 0;
    }
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
  fs.last_chunk_len = 0;
  fs.foreground_pauses = 0;
  fs.cancel_requested = false;
  if (fs.policy.chunk_time.count() > 0)
    spdlog::info("{}: trim pass starting ({}, {}, chunks of up to {} sized to take {})",
                 fs.fs.mount.mount_point, fs.fs.mount.fs_type,
                 format_size(fs.fs.geometry.size_bytes), format_size(fs.policy.chunk_bytes),
                 format_duration(fs.policy.chunk_time));
  else
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
  const std::uint64_t length =
      chunk_length(fs.policy, gentle, fs.range_bytes_per_sec, fs.last_chunk_len);
  auto range = next_chunk(fs.fs.geometry, fs.cursor, length, fs.policy.min_extent_bytes);
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
      fs.range_bytes_per_sec = learn_rate(fs.range_bytes_per_sec, job.range, result.elapsed);
      if (job.range.len < (1ull << 62)) fs.last_chunk_len = job.range.len;
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

}  // namespace trimd
