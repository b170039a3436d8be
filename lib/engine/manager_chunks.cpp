// What a chunk that came back means for its pass: progress recorded, the
// cursor moved on, a vanished filesystem retried, the pass ended.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "chunk_sizing.hpp"
#include "manager.hpp"
#include "manager_tracked.hpp"
#include "planner.hpp"

namespace trimd {

namespace {

// A filesystem that vanished mid-chunk is looked at again after this ...
constexpr Duration kRetryAfterGone = std::chrono::seconds{30};
// ... this many times in a row, then the pass fails (a mount point whose
// device keeps changing would otherwise be retried for ever).
constexpr unsigned kMaxGoneRetries = 3;

}  // namespace

void Manager::record_progress(Tracked& fs) {
  FsRecord& record = records_[fs.fs.id];
  record.mount_point = fs.fs.mount.mount_point;
  if (fs.pass) {
    record.cursor = fs.pass->cursor;
    record.pass_start = fs.pass->start;
    record.pass_bytes = fs.pass->bytes_discarded;
    record.pass_waited = fs.pass->waited;
  } else {
    record.pass_waited = Duration{0};
    record.cursor.reset();
    record.pass_start.reset();
    record.pass_bytes = 0;
  }
  state_dirty_ = true;
}

// The job's disks are free again; its filesystem, when still tracked.
Manager::Tracked* Manager::chunk_returned(const ChunkJob& job, TimePoint now) {
  for (const auto& disk : job.disks) busy_disks_.erase(disk);
  Tracked* fs = find(job.fs_id);
  if (fs && fs->in_flight == job.serial) {
    fs->in_flight.reset();
    fs->slot.revoked = false;
    fs->slot.last_used = now;
  }
  return fs && fs->pass ? fs : nullptr;
}

void Manager::chunk_ok(Tracked& fs, const ChunkJob& job, const ChunkResult& result, TimePoint now,
                       SteadyPoint mono) {
  Pass& pass = *fs.pass;
  fs.gone_retries = 0;
  fs.range_bytes_per_sec = learn_rate(fs.range_bytes_per_sec, job.range, result.elapsed);
  if (result.discard_time)
    fs.per_discard = learn_discard_time(fs.per_discard, *result.discard_time, result.discards);
  pace(fs, job.disks, result.device_time, now, mono);
  if (job.range.len < (1ull << 62)) pass.last_chunk_len = job.range.len;
  pass.preempted_in_a_row = 0;
  pass.timed_out_in_a_row = 0;
  pass.timed_out_len = 0;
  // A shrunk chunk that completed: the next may be twice as long.
  if (pass.shrink_cap > 0)
    pass.shrink_cap = pass.shrink_cap < (1ull << 61) ? 2 * pass.shrink_cap : 0;
  ++pass.chunks;
  pass.bytes_reported += result.outcome.bytes_reported;
  if (result.bytes_discarded)
    pass.bytes_discarded += *result.bytes_discarded;
  else
    pass.discard_measured = false;
  pass.cursor =
      job.range.start +
      std::min(job.range.len, std::numeric_limits<std::uint64_t>::max() - job.range.start);
  Duration pause = gentle_pace(pass) ? fs.policy.gentle_pause : fs.policy.chunk_pause;
  if (fs.policy.rate_limit_bytes_per_sec > 0 && job.range.len < (1ull << 62)) {
    // The range, not the bytes discarded, is what the rate limits: the
    // cost of a FITRIM call grows with the range it scans.
    const auto budget = std::chrono::microseconds{
        static_cast<std::int64_t>(static_cast<double>(job.range.len) * 1e6 /
                                  static_cast<double>(fs.policy.rate_limit_bytes_per_sec))};
    pause = std::max(pause, budget - result.elapsed);
  }
  pass.not_before = mono + pause;
  pass.backoff = WaitingFor::Nothing;
  if (pass.cursor >= pass_end(fs.fs.geometry))
    finish_pass(fs, PassOutcome{PassResult::Success, {}}, now);
  else
    record_progress(fs);
}

void Manager::chunk_finished(const ChunkJob& job, const ChunkResult& result, TimePoint now,
                             SteadyPoint mono) {
  Tracked* found = chunk_returned(job, now);
  if (!found) return;
  Tracked& fs = *found;
  const TrimOutcome& outcome = result.outcome;
  const std::string& where = fs.fs.mount.mount_point;

  switch (outcome.status) {
    case TrimStatus::Ok: chunk_ok(fs, job, result, now, mono); break;
    case TrimStatus::PastEnd: finish_pass(fs, PassOutcome{PassResult::Success, {}}, now); break;
    case TrimStatus::Unsupported:
      spdlog::warn("{}: {}; not trimming it again", where, outcome.message);
      fs.unsupported = true;
      fs.unsupported_reason = outcome.message;
      finish_pass(fs, PassOutcome{PassResult::Unsupported, {}}, now);
      break;
    case TrimStatus::Gone:
      if (++fs.gone_retries > kMaxGoneRetries) {
        spdlog::error("{}: {}; giving up on this pass", where, outcome.message);
        finish_pass(fs, PassOutcome{PassResult::Failed, outcome.message}, now);
        break;
      }
      log_event(EventId::FilesystemGone, spdlog::level::warn,
                event_fields(fs.fs, {{"REASON", outcome.message}}),
                fmt::format("{}: {}; retrying in {}", where, outcome.message,
                            format_duration(kRetryAfterGone)));
      fs.pass->not_before = mono + kRetryAfterGone;
      fs.pass->backoff = WaitingFor::Retry;
      record_progress(fs);
      break;
    case TrimStatus::Error:
      spdlog::error("{}: {}", where, outcome.message);
      finish_pass(fs, PassOutcome{PassResult::Failed, outcome.message}, now);
      break;
  }
  after_chunk(fs, now);
}

// Whatever became of a chunk: a cancel waiting for it takes effect, a
// filesystem that vanished meanwhile is forgotten.
void Manager::after_chunk(Tracked& fs, TimePoint now) {
  if (fs.pass && fs.pass->cancel_requested)
    finish_pass(fs, PassOutcome{PassResult::Cancelled, {}}, now);
  if (fs.vanished) {
    forget_vanished(fs);
    give_back_slot(fs, "unmounted", now);
    std::string id = fs.fs.id;
    filesystems_.erase(id);
    for (auto* listener : listeners_) listener->filesystem_removed(id);
  } else {
    notify(fs, now);
  }
  notify_manager();
}

}  // namespace trimd
