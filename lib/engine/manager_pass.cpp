// A pass's beginning and end, chunks that did not finish (preempted, killed
// on request), and how results and waits read as text at the edges.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "chunk_sizing.hpp"
#include "log_event.hpp"
#include "manager.hpp"
#include "manager_tracked.hpp"

namespace trimd {

namespace {

// After a chunk killed for its time limit the filesystem is left alone this
// long, so that a umount retried meanwhile finds it free.
constexpr Duration kRestAfterTimeout = std::chrono::seconds{1};
// Halving from the largest chunk reaches the smallest in fewer timeouts;
// more in a row mean even the smallest chunk cannot finish in time.
constexpr unsigned kMaxTimeoutsInARow = 10;

}  // namespace

std::string Wait::text() const {
  switch (reason) {
    case WaitingFor::Nothing:
    case WaitingFor::Due: return {};
    case WaitingFor::DisksBusy:
      // The disk first: a progress bar at 80 columns keeps only the start.
      return "disk " + busy.disk + ": " + to_string(busy.limit);
    case WaitingFor::OutsideWindow: return "outside the trim window";
    case WaitingFor::DiskShared: return "another filesystem on the same disk is being trimmed";
    case WaitingFor::Paused: return "paused on request";
    case WaitingFor::Retry: return "the mount point changed; looking again shortly";
    case WaitingFor::FleetSlot: return detail;
    case WaitingFor::OnBattery: return "on battery power (on_battery = \"wait\")";
    case WaitingFor::Pacing: return "pacing";
  }
  return {};
}

LogFields event_fields(const DiscoveredFs& fs, const LogFields& extra) {
  LogFields fields{{"MOUNT_POINT", fs.mount.mount_point},
                   {"DEVICE", fs.mount.source},
                   {"FSTYPE", fs.mount.fs_type}};
  fields.insert(fields.end(), extra.begin(), extra.end());
  return fields;
}

void Manager::start_pass(Tracked& fs, TimePoint now) {
  Pass& pass = fs.pass.emplace();
  pass.start = now;
  if (fs.request) {
    pass.forced = true;
    pass.ignore_idle = fs.request->ignore_idle;
    fs.request.reset();
  }
  const std::string sizing =
      fs.policy.chunk_time.count() > 0
          ? fmt::format("chunks of up to {} sized to take {}", format_size(fs.policy.chunk_bytes),
                        format_duration(fs.policy.chunk_time))
          : fmt::format("chunks of {}", format_size(fs.policy.chunk_bytes));
  log_event(EventId::PassStarted, spdlog::level::info, event_fields(fs.fs),
            fmt::format("{}: trim pass starting ({}, {}, {})", fs.fs.mount.mount_point,
                        fs.fs.mount.fs_type, format_size(fs.fs.geometry.size_bytes), sizing));
  record_progress(fs);
}

// Waits are timed on the wall clock, as the pass's start and end are.
void Manager::set_wait(Tracked& fs, Wait wait, TimePoint now) {
  if (fs.pass) {
    Pass& pass = *fs.pass;
    const bool held = holds_up(wait.reason);
    if (held && !pass.waiting_since) pass.waiting_since = now;
    if (!held && pass.waiting_since) {
      pass.waited = pass.waited_until(now);
      pass.waiting_since.reset();
    }
  }
  fs.wait = std::move(wait);
}

// TrimStarted goes out after the status that says "trimming".
void Manager::announce_start(Tracked& fs) {
  if (!fs.pass || !fs.pass->announce_pending) return;
  fs.pass->announce_pending = false;
  for (auto* listener : listeners_) listener->trim_started(fs.fs.id);
}

void Manager::count_finished(FsRecord& record, const Pass& pass, const PassHistoryEntry& entry) {
  Lifetime done;
  done.bytes = entry.bytes;
  done.passes = 1;
  done.preemptions = pass.preemptions;
  done.pauses = pass.foreground_pauses;
  done.failures = entry.result.result == PassResult::Failed ? 1 : 0;
  record.lifetime += done;
  totals_ += done;
  add_history(record, entry);
}

void Manager::finish_pass(Tracked& fs, PassOutcome outcome, TimePoint now) {
  const Duration waited = fs.pass->waited_until(now);
  const Pass pass = std::move(*fs.pass);
  fs.pass.reset();
  fs.wait = Wait{};
  const auto elapsed = std::chrono::duration_cast<Duration>(now - pass.start);
  const Duration trimming = std::max(elapsed - waited, Duration{0});
  const std::uint64_t bytes = pass.discard_measured ? pass.bytes_discarded : pass.bytes_reported;
  const std::string text = outcome.text();
  FsRecord& record = records_[fs.fs.id];
  record.last_start = pass.start;
  record.last_end = now;
  record.last_result = outcome;
  record.last_bytes = bytes;
  record.last_trimming = trimming;
  record.last_waited = waited;
  count_finished(
      record, pass,
      PassHistoryEntry{pass.start, now, trimming, waited, bytes, outcome, pass.preemptions});
  record_progress(fs);
  reschedule(fs, now);
  finished_[fs.fs.id] = outcome;
  // A slot paying for its last chunk is handed on when that pause ends (review_slot).
  if (!fs.slot.pacing) give_back_slot(fs, "the pass ended: " + text, now);

  const bool failed = outcome.result == PassResult::Failed;
  const LogFields fields =
      event_fields(fs.fs, {{"RESULT", text},
                           {"BYTES", std::to_string(bytes)},
                           {"DURATION_USEC", std::to_string(trimming.count())},
                           {"WAIT_USEC", std::to_string(waited.count())},
                           {"PREEMPTIONS", std::to_string(pass.preemptions)},
                           {"CHUNKS", std::to_string(pass.chunks)},
                           {"PAUSES", std::to_string(pass.foreground_pauses)},
                           {"REPORTED_BYTES", std::to_string(pass.bytes_reported)}});
  log_event(
      failed ? EventId::PassFailed : EventId::PassFinished,
      outcome.result == PassResult::Success ? spdlog::level::info : spdlog::level::warn, fields,
      fmt::format("{}: trim pass {}: {} discarded (FITRIM reported {}) in {} (waited {}), "
                  "{} chunks, {} pauses for foreground I/O, {} chunks preempted",
                  fs.fs.mount.mount_point, text, format_size(pass.bytes_discarded),
                  format_size(pass.bytes_reported), format_duration(trimming),
                  format_duration(waited), pass.chunks, pass.foreground_pauses, pass.preemptions));
  // The split of the time is on the bus before TrimFinished.
  notify(fs, now);
  for (auto* listener : listeners_) listener->trim_finished(fs.fs.id, outcome, bytes, elapsed);
}

void Manager::chunk_discarded(const ChunkJob& job, std::optional<std::uint64_t> bytes,
                              Duration device_time) {
  Tracked* fs = find(job.fs_id);
  if (!fs || !fs->pass || fs->in_flight != job.serial) return;
  fs->unreported_device_time = device_time;
  if (bytes)
    fs->pass->bytes_discarded += *bytes;
  else
    fs->pass->discard_measured = false;
}

void Manager::chunk_preempted(const ChunkJob& job, TimePoint now, SteadyPoint mono) {
  Tracked* found = chunk_returned(job, now);
  if (!found) return;
  Tracked& fs = *found;
  Pass& pass = *fs.pass;
  pace(fs, job.disks, std::exchange(fs.unreported_device_time, Duration{0}), now, mono);
  ++pass.preemptions;
  // Redone from its start; the second time in a row it comes back smaller.
  if (++pass.preempted_in_a_row >= 2) pass.shrink_cap = shrunk_after_preemption(job.range.len);
  idleness_.mark_busy(job.disks, now);
  pass.not_before = mono + fs.policy.chunk_pause;
  pass.backoff = WaitingFor::Nothing;
  log_event(EventId::PassPreempted, spdlog::level::debug,
            event_fields(fs.fs, {{"OFFSET", std::to_string(job.range.start)}}),
            fmt::format("{}: chunk at offset {} preempted ({} in a row)", fs.fs.mount.mount_point,
                        job.range.start, pass.preempted_in_a_row));
  record_progress(fs);
  after_chunk(fs, now);
}

void Manager::chunk_timed_out(const ChunkJob& job, TimePoint now, SteadyPoint mono) {
  Tracked* found = chunk_returned(job, now);
  if (!found) return;
  Tracked& fs = *found;
  Pass& pass = *fs.pass;
  pace(fs, job.disks, std::exchange(fs.unreported_device_time, Duration{0}), now, mono);
  pass.shrink_cap = shrunk_after_preemption(job.range.len);
  pass.not_before = mono + std::max(fs.policy.chunk_pause, kRestAfterTimeout);
  pass.backoff = WaitingFor::Nothing;
  // The retry was no shorter: the planner cannot split it (one block group),
  // so only more time lets it finish.
  const bool could_not_shrink = pass.timed_out_len > 0 && job.range.len >= pass.timed_out_len;
  if (could_not_shrink) ++pass.limit_doublings;
  pass.timed_out_len = job.range.len;
  spdlog::warn("{}: a chunk of {} at offset {} ran past its time limit of {}; retrying it {}",
               fs.fs.mount.mount_point, format_size(job.range.len), job.range.start,
               format_duration(job.time_limit),
               could_not_shrink ? "with a time limit of " + format_duration(chunk_time_limit(
                                                                fs.policy, pass.limit_doublings))
                                : std::string("smaller"));
  if (++pass.timed_out_in_a_row >= kMaxTimeoutsInARow)
    finish_pass(
        fs,
        PassOutcome{PassResult::Failed, "chunks keep running past the time limit of " +
                                            format_duration(job.time_limit) + "; raise chunk_time"},
        now);
  else
    record_progress(fs);
  after_chunk(fs, now);
}

void Manager::chunk_interrupted(const ChunkJob& job, TimePoint now, SteadyPoint mono) {
  Tracked* found = chunk_returned(job, now);
  if (!found) return;
  pace(*found, job.disks, std::exchange(found->unreported_device_time, Duration{0}), now, mono);
  found->pass->not_before = std::max(found->pass->not_before, mono);
  record_progress(*found);
  after_chunk(*found, now);
}

// Paused, cancelled, or unmounted: a chunk on a filesystem gone from the
// mount table trims through a detached copy of its mount (trimmer.cpp), and
// only the runner's death lets the kernel release the device.
std::vector<std::uint64_t> Manager::jobs_to_stop() const {
  std::vector<std::uint64_t> serials;
  for (const auto& [id, fs] : filesystems_)
    if (fs->in_flight && (asleep_ || fs->paused || fs->vanished || fs->slot.revoked ||
                          (fs->pass && fs->pass->cancel_requested)))
      serials.push_back(*fs->in_flight);
  return serials;
}

void Manager::mounts_now(const std::set<int>& mount_ids) {
  for (auto& [id, fs] : filesystems_) {
    const int mount_id = fs->fs.identity.mount_id;
    if (fs->in_flight && mount_id != 0 && !mount_ids.count(mount_id)) fs->vanished = true;
  }
}

}  // namespace trimd
