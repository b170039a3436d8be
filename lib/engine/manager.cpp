// The manager's trimming loop: which filesystem is due and which chunk goes
// next (manager_chunks.cpp: what a finished chunk means).
#include "manager.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "chunk_sizing.hpp"
#include "manager_tracked.hpp"
#include "planner.hpp"
#include "preemption.hpp"
#include "schedule.hpp"

namespace trimd {

namespace {

// A chunk of a pass that waits for idle disks is killed by foreground I/O;
// one that trims anyway (overdue, --ignore-idle) is only held to its time
// limit; with preemption off, foreground I/O does not touch it at all (a
// shared backend's other tenants would otherwise cut every long chunk short
// and make it be redone whole).
OnForeground on_foreground(const Config& config, const Pass& pass) {
  if (config.preempt_interval.count() <= 0) return OnForeground::Ignore;
  if (pass.gentle || pass.ignore_idle) return OnForeground::HoldToLimit;
  return OnForeground::Preempt;
}

// [idle] preempt_latency for a chunk on `disks`; "auto" tolerates waits
// only where every disk queues its discards (a chunk on an exclusive-TRIM
// disk makes every foreground I/O wait).
Duration tolerated_latency(const Config& config, const std::vector<BlockDisk>& disks) {
  if (config.preempt_latency) return *config.preempt_latency;
  const bool all_queued =
      !disks.empty() && std::all_of(disks.begin(), disks.end(), [](const BlockDisk& disk) {
        return disk.discard_queueing == DiscardQueueing::Queued;
      });
  return all_queued ? kQueuedPreemptLatency : Duration{0};
}

// A failed pass is retried sooner than a whole interval later.
constexpr Duration kRetryAfterFailure = std::chrono::hours{1};

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

const char* to_string(ManagerState state) {
  switch (state) {
    case ManagerState::Idle: return "idle";
    case ManagerState::Trimming: return "trimming";
    case ManagerState::Paused: return "paused";
  }
  return "unknown";
}

const char* to_string(WaitingFor what) {
  switch (what) {
    case WaitingFor::Nothing: return "";
    case WaitingFor::Due: return "due";
    case WaitingFor::DisksBusy: return "disks_busy";
    case WaitingFor::OutsideWindow: return "outside_window";
    case WaitingFor::DiskShared: return "disk_shared";
    case WaitingFor::Paused: return "paused";
    case WaitingFor::Retry: return "retry";
    case WaitingFor::FleetSlot: return "fleet_slot";
    case WaitingFor::OnBattery: return "on_battery";
    case WaitingFor::Pacing: return "pacing";
  }
  return nullptr;
}

Manager::Manager(Config config, StateMap state, TimePoint now)
    : config_(std::move(config)), records_(std::move(state)), idleness_(config_.idle),
      started_at_(now) {
  for (const auto& [id, record] : records_) totals_ += record.lifetime;
}

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
  if (!fs.pass) reschedule(fs, now);
}

void Manager::reschedule(Tracked& fs, TimePoint now) {
  const FsRecord& record = records_[fs.fs.id];
  std::optional<TimePoint> last_end = record.last_end;
  // A pass cannot have ended in the future (a clock set back, an edited
  // file): count it as ended when trimd started, so that the next one is
  // neither decades away nor moved on at every reschedule.
  if (last_end && *last_end > now) last_end = std::min(started_at_, now);
  const SchedulePolicy& schedule = fs.policy.schedule;
  const auto& last = record.last_result;
  if (last_end && last && last->result == PassResult::Failed) {
    fs.due = std::max(*last_end + std::min(kRetryAfterFailure, schedule.interval), now);
    return;
  }
  const double jitter = stable_jitter(fs.fs.id, last_end ? to_usec(*last_end) : 0);
  // Never trimmed: first_delay counts from when trimd first saw it, not
  // from this start, so restarts do not push its first pass on and on.
  fs.due = next_due(schedule, last_end, record.first_seen.value_or(started_at_), jitter);
  if (const auto soon = first_pass_after_takeover(record)) fs.due = std::min(fs.due, *soon);
}

void Manager::update_filesystems(std::vector<DiscoveredFs> found, TimePoint now) {
  settle_clone_ids(found);
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
    if (record.device != fs->fs.mount.source) {
      record.device = fs->fs.mount.source;  // tells clones apart (settle_clone_ids)
      state_dirty_ = true;
    }
    // Nor can it have been first seen in the future: its first pass would be
    // that far away ("173 years left"). Repaired for good, unlike last_end.
    if (!record.first_seen || *record.first_seen > now) {
      record.first_seen = now;
      state_dirty_ = true;
    }
    apply_policy(*fs, now);
    if (fs->trimmable())
      spdlog::info("{}: tracking {} on {}", fs->fs.mount.mount_point, fs->fs.mount.fs_type,
                   fs->fs.mount.source);
    else
      // A warning when it cannot be trimmed; the admin's own choice
      // (disabled, opted out, out of scope) is no problem to report.
      log_event(EventId::FilesystemSkipped,
                fs->cannot_discard() ? spdlog::level::warn : spdlog::level::info,
                event_fields(fs->fs, {{"REASON", fs->untrimmable_reason()}}),
                fmt::format("{}: not trimming {} on {}: {}", fs->fs.mount.mount_point,
                            fs->fs.mount.fs_type, fs->fs.mount.source, fs->untrimmable_reason()));
    if (record.cursor && fs->trimmable() && !cursor_in_range(fs->fs.geometry, *record.cursor)) {
      spdlog::warn("{}: the saved cursor {} lies beyond the filesystem; its pass starts over",
                   fs->fs.mount.mount_point, *record.cursor);
      record.cursor = 0;
      record.pass_start.reset();
      record.pass_bytes = 0;
    }
    if (record.cursor && fs->trimmable()) {
      // An unfinished pass from before a restart: go on where it stopped.
      Pass& pass = fs->pass.emplace();
      pass.cursor = *record.cursor;
      pass.start = record.pass_start.value_or(now);
      pass.bytes_discarded = record.pass_bytes;
      pass.waited = record.pass_waited;
      log_event(EventId::PassResumed, spdlog::level::info,
                event_fields(fs->fs, {{"OFFSET", std::to_string(pass.cursor)}}),
                fmt::format("{}: resuming the unfinished pass at offset {}",
                            fs->fs.mount.mount_point, pass.cursor));
    }
    Tracked& ref = *fs;
    filesystems_.emplace(ref.fs.id, std::move(fs));
    FsStatus status = make_status(ref, now);
    ref.last_sent = status;
    for (auto* listener : listeners_) listener->filesystem_added(status);
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
    give_back_slot(*it->second, "unmounted", now);
    std::string id = it->first;
    it = filesystems_.erase(it);
    for (auto* listener : listeners_) listener->filesystem_removed(id);
  }
  notify_manager();
}

// Unmounted: its state record (and the cursor of a pass) stays for when it
// comes back; a pass it was in is reported as not completed.
void Manager::forget_vanished(Tracked& fs) {
  LogFields fields = event_fields(fs.fs);
  if (fs.pass) {
    fields.push_back({"OFFSET", std::to_string(fs.pass->cursor)});
    log_event(EventId::FilesystemGone, spdlog::level::warn, fields,
              fmt::format("{}: unmounted during a trim pass; it resumes at offset {} when "
                          "mounted again",
                          fs.fs.mount.mount_point, fs.pass->cursor));
    finished_[fs.fs.id] = PassOutcome{PassResult::Interrupted, "unmounted during the pass"};
  } else {
    log_event(EventId::FilesystemGone, spdlog::level::info, fields,
              fmt::format("{}: no longer mounted", fs.fs.mount.mount_point));
  }
}

void Manager::observe_diskstats(const std::vector<DiskStat>& sample, TimePoint now,
                                const std::map<std::string, IoBytes>& own) {
  idleness_.observe(sample, now, own);
}

// --- the trimming loop ----------------------------------------------------------

bool Manager::disks_free(const Tracked& fs) const {
  for (const auto& disk : fs.fs.disk_names())
    if (busy_disks_.count(disk)) return false;
  return true;
}

bool Manager::wants_to_run(const Tracked& fs, TimePoint now) const {
  return fs.pass || fs.request || now >= fs.due;
}

// Whether `fs` may have its next chunk now; sets fs.wait when not.
bool Manager::ready_to_trim(Tracked& fs, TimePoint now, SteadyPoint mono) {
  const bool forced = fs.request || (fs.pass && fs.pass->forced);
  if (!forced && !in_window(fs.policy.schedule.window, now)) {
    set_wait(fs, Wait{WaitingFor::OutsideWindow, {}, {}}, now);
    return false;
  }
  const OnBatteryPolicy on_battery =
      on_battery_ && !forced ? fs.policy.on_battery : OnBatteryPolicy::Trim;
  if (on_battery == OnBatteryPolicy::Wait) {
    set_wait(fs, Wait{WaitingFor::OnBattery, {}, {}}, now);
    return false;
  }
  if (!fs.pass) start_pass(fs, now);
  Pass& pass = *fs.pass;
  pass.battery_gentle = on_battery == OnBatteryPolicy::Gentle;
  if (mono < pass.not_before) {
    set_wait(fs, Wait{pass.backoff, {}, {}}, now);
    return false;
  }
  if (paced(fs, now, mono)) return false;
  const auto busy = pass.ignore_idle ? std::nullopt : idleness_.first_busy(fs.fs.disk_names(), now);
  const bool gentle = busy && is_overdue(fs.policy.schedule, fs.due, now);
  if (busy && !gentle) {
    if (fs.wait.reason != WaitingFor::DisksBusy && pass.chunks > 0) {
      ++pass.foreground_pauses;
      log_event(EventId::PassPaused, spdlog::level::debug,
                event_fields(fs.fs, {{"DISK", busy->disk}}),
                fmt::format("{}: foreground I/O on {}, pausing the pass", fs.fs.mount.mount_point,
                            busy->disk));
    } else if (fs.wait.reason != WaitingFor::DisksBusy) {
      // No chunk done yet, so no pause: still the decision to wait, for
      // whoever must know that trimd looked and held back.
      log_event(EventId::WaitingForIdle, spdlog::level::debug,
                event_fields(fs.fs, {{"DISK", busy->disk}}),
                fmt::format("{}: foreground I/O on {}, waiting for idle disks to start",
                            fs.fs.mount.mount_point, busy->disk));
    }
    set_wait(fs, Wait{WaitingFor::DisksBusy, *busy, {}}, now);
    return false;
  }
  if (gentle && !pass.gentle)
    spdlog::warn("{}: overdue since {}; trimming gently although the disks are busy",
                 fs.fs.mount.mount_point,
                 format_duration(std::chrono::duration_cast<Duration>(now - fs.due)));
  pass.gentle = gentle;
  if (!disks_free(fs)) {
    set_wait(fs, Wait{WaitingFor::DiskShared, {}, {}}, now);
    return false;
  }
  return slot_allows(fs, now);
}

ChunkJob Manager::make_job(Tracked& fs, const TrimRange& range, TimePoint now) {
  ChunkJob job;
  job.serial = next_serial_++;
  job.fs_id = fs.fs.id;
  job.target = TrimTarget{fs.fs.mount.mount_point, fs.fs.identity};
  job.fs_type = fs.fs.mount.fs_type;
  job.range = range;
  job.disks = fs.fs.disk_names();
  for (const auto& device : fs.fs.topology.devices) job.devices.push_back(device.name);
  job.on_foreground = on_foreground(config_, *fs.pass);
  job.tolerated_latency = tolerated_latency(config_, fs.fs.topology.disks);
  job.time_limit = chunk_time_limit(fs.policy, fs.pass->limit_doublings);
  for (const auto& disk : job.disks) busy_disks_.insert(disk);
  fs.in_flight = job.serial;
  set_wait(fs, Wait{}, now);
  if (!fs.pass->announced) fs.pass->announced = fs.pass->announce_pending = true;
  log_event(EventId::ChunkStarted, spdlog::level::debug,
            event_fields(fs.fs, {{"CHUNK", std::to_string(fs.pass->chunks + 1)},
                                 {"OFFSET", std::to_string(job.range.start)},
                                 {"LENGTH", std::to_string(job.range.len)}}),
            fmt::format("{}: chunk {} at offset {} length {}{}", fs.fs.mount.mount_point,
                        fs.pass->chunks + 1, job.range.start, job.range.len,
                        gentle_pace(*fs.pass) ? " (gentle)" : ""));
  return job;
}

std::optional<ChunkJob> Manager::next_job(Tracked& fs, TimePoint now, SteadyPoint mono) {
  if (fs.in_flight || !fs.trimmable() || !wants_to_run(fs, now)) return std::nullopt;
  if (fs.paused) {
    set_wait(fs, Wait{WaitingFor::Paused, {}, {}}, now);
    return std::nullopt;
  }
  if (!ready_to_trim(fs, now, mono)) return std::nullopt;
  Pass& pass = *fs.pass;
  std::uint64_t length = chunk_length(fs.policy, gentle_pace(pass), fs.range_bytes_per_sec,
                                      pass.last_chunk_len, fs.per_discard);
  if (pass.shrink_cap > 0) length = std::min(length, pass.shrink_cap);
  auto range = next_chunk(fs.fs.geometry, pass.cursor, length, fs.policy.min_extent_bytes);
  if (!range) {
    finish_pass(fs, PassOutcome{PassResult::Success, {}}, now);
    return std::nullopt;
  }
  return make_job(fs, *range, now);
}

std::vector<ChunkJob> Manager::take_jobs(TimePoint now, SteadyPoint mono) {
  std::vector<ChunkJob> jobs;
  if (stopping_ || asleep_) return jobs;
  // Most overdue first, so one disk shared by two filesystems serves the
  // one that has waited longest.
  std::vector<Tracked*> order;
  for (auto& [id, fs] : filesystems_) order.push_back(fs.get());
  std::erase_if(paced_disks_, [mono](const auto& disk) { return disk.second.until <= mono; });
  std::stable_sort(order.begin(), order.end(),
                   [](const Tracked* a, const Tracked* b) { return a->due < b->due; });
  for (Tracked* fs : order) {
    if (auto job = next_job(*fs, now, mono)) jobs.push_back(std::move(*job));
    review_slot(*fs, now, mono);
    notify(*fs, now);
    announce_start(*fs);
  }
  notify_manager();
  return jobs;
}

TimePoint Manager::next_wakeup(TimePoint now, SteadyPoint mono) const {
  TimePoint wake = now + std::chrono::hours{1};
  const auto after = [&](SteadyPoint when) {
    return now + std::chrono::duration_cast<Clock::duration>(
                     std::max(when - mono, SteadyClock::duration::zero()));
  };
  for (const auto& [id, fs] : filesystems_) {
    // A slot kept through its holder's pause is handed on when it ends.
    if (fs->slot.pacing) wake = std::min(wake, after(fs->slot.pacing->until));
    if (!fs->trimmable() || fs->paused || fs->in_flight) continue;
    // Waiting for idle disks or a busy disk: the next diskstats sample or
    // the other chunk's completion wakes the loop, not a timer; AC power
    // comes with set_on_battery().
    const WaitingFor reason = fs->wait.reason;
    if (reason == WaitingFor::DisksBusy || reason == WaitingFor::DiskShared ||
        reason == WaitingFor::OnBattery)
      continue;
    if (reason == WaitingFor::FleetSlot) {
      // The gate's answer wakes the loop; only going on alone is timed.
      if (const auto alone = fleet_local_at(*fs)) wake = std::min(wake, *alone);
      continue;
    }
    TimePoint t = fs->due;
    if (fs->pass) {
      SteadyPoint ready = fs->pass->not_before;
      if (const DutyPause* pause = pause_of(*fs, mono)) ready = std::max(ready, pause->until);
      t = after(ready);
    } else if (fs->request)
      t = now;
    const bool forced = fs->request || (fs->pass && fs->pass->forced);
    if (!forced && fs->policy.schedule.window)
      t = next_window_start(fs->policy.schedule.window, std::max(t, now));
    wake = std::min(wake, t);
  }
  return std::max(wake, now);
}

void Manager::stop() { stopping_ = true; }

bool Manager::passes_active() const {
  for (const auto& [id, fs] : filesystems_)
    if (fs->pass || fs->in_flight || (fs->request && fs->trimmable())) return true;
  return false;
}

}  // namespace trimd
