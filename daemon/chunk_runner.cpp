#include "chunk_runner.hpp"

#include <sys/epoll.h>

#include <spdlog/spdlog.h>

#include <poll.h>
#include <cstring>

#include "duty.hpp"
#include "log_event.hpp"
#include "units.hpp"

namespace trimd {

namespace {

// How long a finished chunk waits for the discards its filesystem left in
// flight (xfs returns from FITRIM before they complete): what completes
// later goes uncounted. Its disks stay held meanwhile, so that the next
// chunk's discards do not queue behind them.
constexpr Duration kDiscardSettleLimit = std::chrono::seconds{5};

std::int64_t wall_usec() { return to_usec(Clock::now()); }

}  // namespace

// A chunk whose FITRIM returned, its report held until its filesystem's
// discards have completed (DiscardMeter).
struct ChunkRunner::Settling {
  ChunkReport report;
  DiscardMeter meter;
  std::chrono::steady_clock::time_point deadline;
};

struct ChunkRunner::Chunk {
  ChunkJob job;
  std::unique_ptr<RunnerProcess> process;
  std::chrono::steady_clock::time_point started;
  std::optional<DiscardMeter> meter;
  std::optional<PreemptionWatch> watch;
  std::optional<ChunkDeadline> deadline;
  IoBytes io_charged;              // of its own I/O, what take_own_io() has handed out
  std::optional<ChunkEnd> killed;  // why trimd killed it
  PreemptDecision decision;
  std::int64_t killed_at_usec = 0;
};

ChunkRunner::ChunkRunner(EventLoop& loop, Sampler sample, Duration preempt_interval, OnDone on_done)
    : loop_(loop), sample_(std::move(sample)), interval_(preempt_interval),
      on_done_(std::move(on_done)), timer_(loop, [this] {
        check_time_limits();
        check_preemption();
        check_settling(false);
      }) {}

ChunkRunner::~ChunkRunner() {
  for (auto& [serial, chunk] : chunks_) loop_.remove(chunk->process->pidfd());
}

void ChunkRunner::start(ChunkJob job) {
  auto chunk = std::make_unique<Chunk>();
  const auto sample = sample_();
  chunk->meter.emplace(job.devices, sample);
  chunk->started = std::chrono::steady_clock::now();
  chunk->deadline.emplace(chunk->started, job.time_limit, hold_);
  chunk->process = std::make_unique<RunnerProcess>(job.target, job.range);
  chunk->watch.emplace(job.disks, sample, IoBytes{},
                       unattributed_read_allowance(job.fs_type, job.range.len),
                       job.tolerated_latency);
  chunk->job = std::move(job);
  const std::uint64_t serial = chunk->job.serial;
  loop_.add(chunk->process->pidfd(), EPOLLIN, [this, serial](std::uint32_t) { on_exit(serial); });
  chunks_.emplace(serial, std::move(chunk));
  arm_sampling();
}

void ChunkRunner::arm_sampling() {
  if (chunks_.empty() && settling_.empty())
    timer_.disarm();
  else
    timer_.arm_every(interval_);
}

void ChunkRunner::charge_own_io(Chunk& chunk, IoBytes total) {
  const IoBytes fresh = io_delta(chunk.io_charged, total);
  chunk.io_charged = total;
  // Not split by disk: the first disk gets it all (the idleness model takes
  // it out of that disk's reads and writes). Almost every chunk has one disk.
  if (!chunk.job.disks.empty()) own_io_[chunk.job.disks.front()] += fresh;
}

// The reads a filesystem makes for FITRIM in a kernel worker (btrfs's
// block-group caching) are nobody's read_bytes. The preemption watch takes
// up to unattributed_read_allowance() of them per chunk; the idleness model
// takes as much per sample in which a chunk ran, or it would call the disk
// busy right after a chunk and pause the pass for a whole idle window.
void ChunkRunner::charge_kernel_reads(const Chunk& chunk) {
  if (!chunk.job.disks.empty())
    own_io_[chunk.job.disks.front()].read +=
        unattributed_read_allowance(chunk.job.fs_type, chunk.job.range.len);
}

std::map<std::string, IoBytes> ChunkRunner::take_own_io() {
  for (auto& [serial, chunk] : chunks_) {
    if (auto io = chunk->process->io()) charge_own_io(*chunk, *io);
    charge_kernel_reads(*chunk);
  }
  return std::exchange(own_io_, {});
}

// The bound on how long trimd holds a filesystem: a chunk still in the
// kernel past its deadline is killed, whether preemptible or not.
void ChunkRunner::check_time_limits() {
  const auto now = std::chrono::steady_clock::now();
  for (auto& [serial, chunk] : chunks_) {
    if (chunk->killed || !chunk->deadline->passed(now)) continue;
    chunk->process->kill();
    chunk->killed = ChunkEnd::TimedOut;
    chunk->killed_at_usec = wall_usec();
    // The limit it was held to, for the manager's account of the kill.
    chunk->job.time_limit = chunk->deadline->limit();
  }
}

void ChunkRunner::check_preemption() {
  if (chunks_.empty()) return;
  const auto sample = sample_();
  for (auto& [serial, chunk] : chunks_) {
    if (chunk->killed || chunk->job.on_foreground == OnForeground::Ignore) continue;
    const auto io = chunk->process->io();
    if (!io) continue;  // exiting: its pidfd reports it in a moment
    PreemptDecision decision = chunk->watch->observe(sample, *io);
    if (!decision.preempt()) continue;
    chunk->deadline->foreground_seen();  // a chunk not preempted is now held to its time limit
    if (chunk->job.on_foreground != OnForeground::Preempt) continue;
    chunk->process->kill();
    chunk->killed = ChunkEnd::Preempted;
    chunk->decision = std::move(decision);
    chunk->killed_at_usec = wall_usec();
  }
}

void ChunkRunner::stop(std::uint64_t serial) {
  auto it = chunks_.find(serial);
  if (it == chunks_.end() || it->second->killed == ChunkEnd::Stopped) return;
  it->second->process->kill();
  it->second->killed = ChunkEnd::Stopped;
  it->second->killed_at_usec = wall_usec();
}

void ChunkRunner::stop_all() {
  for (auto& [serial, chunk] : chunks_) stop(serial);
}

// Reports the chunks whose discards have completed, or waited long enough;
// all of them when `now_or_never` (shutting down).
void ChunkRunner::check_settling(bool now_or_never) {
  if (settling_.empty()) return;
  const auto sample = sample_();
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Settling>> done;  // reported after the walk: on_done_ starts chunks
  for (auto it = settling_.begin(); it != settling_.end();) {
    Settling& chunk = *it->second;
    if (chunk.meter.settled(sample) || now_or_never || now >= chunk.deadline) {
      done.push_back(std::move(it->second));
      it = settling_.erase(it);
    } else {
      ++it;
    }
  }
  arm_sampling();
  for (auto& chunk : done) report_done(std::move(chunk->report), chunk->meter);
}

// A chunk is reported once its discards have completed.
void ChunkRunner::settle(ChunkReport report, DiscardMeter meter) {
  if (meter.settled(sample_()) || report.end == ChunkEnd::Stopped) {
    report_done(std::move(report), meter);
    return;
  }
  const std::uint64_t serial = report.job.serial;
  const auto deadline = std::chrono::steady_clock::now() + kDiscardSettleLimit;
  settling_.emplace(
      serial, std::make_unique<Settling>(Settling{std::move(report), std::move(meter), deadline}));
  arm_sampling();
}

// What it discarded and what that cost the device, measured until its
// discards completed (or the wait for them gave up).
void ChunkRunner::report_done(ChunkReport report, const DiscardMeter& meter) {
  report.result.bytes_discarded = meter.bytes();
  report.result.discards = meter.discards();
  report.result.discard_time = meter.discard_time();
  report.result.device_time = chunk_device_time(
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - report.started),
      meter.discard_time());
  on_done_(report);
}

// The fields of a preemption, for tools (bench/) that time reactions and
// count the work a redo repeats: REDONE_BYTES is what the killed call had
// already sent, to be sent again.
void ChunkRunner::log_preemption(const Chunk& chunk, const ChunkReport& report,
                                 std::int64_t exited_at) {
  DiscardMeter meter = *chunk.meter;
  meter.settled(sample_());
  const std::uint64_t redone = meter.bytes().value_or(0);
  const auto& job = report.job;
  const LogFields fields = {{"MOUNT_POINT", job.target.mount_point},
                            {"FSTYPE", job.fs_type},
                            {"DISK", report.decision.disk},
                            {"REASON", to_string(report.decision.reason)},
                            {"FOREGROUND_BYTES", std::to_string(report.decision.foreground_bytes)},
                            {"OFFSET", std::to_string(job.range.start)},
                            {"LENGTH", std::to_string(job.range.len)},
                            {"REDONE_BYTES", std::to_string(redone)},
                            {"KILLED_AT_USEC", std::to_string(chunk.killed_at_usec)},
                            {"EXITED_AT_USEC", std::to_string(exited_at)}};
  const auto waited = report.decision.mean_latency;
  log_event(EventId::RunnerKilled, spdlog::level::info, fields,
            fmt::format(
                "{}: {} on {}{}; the FITRIM runner was killed and gone {} us later, "
                "its chunk at offset {} will be redone ({} bytes already discarded)",
                job.target.mount_point, to_string(report.decision.reason), report.decision.disk,
                waited.count() > 0 ? fmt::format(" waiting {} on average", format_duration(waited))
                                   : std::string{},
                exited_at - chunk.killed_at_usec, job.range.start, redone));
}

void ChunkRunner::on_exit(std::uint64_t serial) {
  auto it = chunks_.find(serial);
  if (it == chunks_.end()) return;
  std::unique_ptr<Chunk> chunk = std::move(it->second);
  chunks_.erase(it);
  loop_.remove(chunk->process->pidfd());
  arm_sampling();
  if (auto io = chunk->process->io()) charge_own_io(*chunk, *io);  // a zombie still tells
  charge_kernel_reads(*chunk);  // for the sample in which it ended
  const RunnerProcess::Exit exit = chunk->process->reap();
  const std::int64_t exited_at = wall_usec();

  ChunkReport report;
  report.job = std::move(chunk->job);
  report.started = chunk->started;
  report.result.elapsed =
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - chunk->started);
  const std::string& where = report.job.target.mount_point;
  if (exit.raw && exit.raw->clone_error != 0) hold_ = MountHold::MountItself;
  if (exit.raw && exit.status == 0 && exit.signal == 0) {
    // Finished, even if a kill came too late to matter: the work is done.
    report.end = ChunkEnd::Finished;
    report.result.outcome = outcome_of(*exit.raw, report.job.target, report.job.range);
  } else if (chunk->killed) {
    report.end = *chunk->killed;
    report.decision = chunk->decision;
    if (report.end == ChunkEnd::Preempted) log_preemption(*chunk, report, exited_at);
  } else {
    report.end = ChunkEnd::Died;
    report.why = exit.signal ? std::string("killed by signal ") + strsignal(exit.signal)
                             : "exited with status " + std::to_string(exit.status);
    spdlog::warn("{}: the FITRIM runner (pid {}) {}; the chunk will be retried", where,
                 chunk->process->pid(), report.why);
  }
  // A killed call's discards count as well: the disk did that work. Only a
  // stop on request (pause, cancel, shutdown) is reported without waiting.
  settle(std::move(report), std::move(*chunk->meter));
}

bool ChunkRunner::drain(Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!chunks_.empty() || !settling_.empty()) {
    check_settling(true);  // shutting down: no waiting for discards
    if (chunks_.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    std::vector<pollfd> fds;
    std::vector<std::uint64_t> serials;
    for (auto& [serial, chunk] : chunks_) {
      fds.push_back(pollfd{chunk->process->pidfd(), POLLIN, 0});
      serials.push_back(serial);
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents) on_exit(serials[i]);
  }
  return true;
}

}  // namespace trimd
