// The chunks in flight, each FITRIM in its own child process (RunnerProcess),
// watched from the event loop through its pidfd. While any chunk runs, and
// only then, the chunks' disks are sampled every `preempt_interval`: a
// preemptible chunk whose disks see foreground I/O (its own I/O discounted,
// see lib/policy/preemption.hpp) is killed at once. The manager decides what a
// preempted or stopped chunk means; this class only runs and kills.
// A chunk whose FITRIM returned (or was killed) is reported once the discards
// its filesystem queued have completed (xfs does not wait for them), so that
// the bytes it discarded are counted whole; its disks stay held until then.
// A chunk still in the kernel past its deadline (lib/policy/chunk_deadline.hpp:
// the job's time_limit once it holds the mount or has met foreground I/O,
// the safety bound before) is killed whatever its kind.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chunk_deadline.hpp"
#include "discard_meter.hpp"
#include "event_loop.hpp"
#include "manager.hpp"
#include "preemption.hpp"
#include "runner_process.hpp"

namespace trimd {

enum class ChunkEnd {
  Finished,   // FITRIM returned: `result` says how
  Preempted,  // killed for foreground I/O
  Stopped,    // killed on request (shutdown, pause, cancel)
  TimedOut,   // killed for running past the job's time_limit
  Died,       // killed by someone else, or crashed: retried like a preemption
};

struct ChunkReport {
  ChunkJob job;
  ChunkEnd end = ChunkEnd::Finished;
  ChunkResult result;        // for Finished; bytes_discarded for every end
  PreemptDecision decision;  // for Preempted
  std::string why;           // for Died
  std::chrono::steady_clock::time_point started;
};

class ChunkRunner {
 public:
  using OnDone = std::function<void(const ChunkReport&)>;
  using Sampler = std::function<std::vector<DiskStat>()>;

  ChunkRunner(EventLoop& loop, Sampler sample, Duration preempt_interval, OnDone on_done);
  ~ChunkRunner();  // kills and reaps every child still running

  void set_preempt_interval(Duration interval) { interval_ = interval; }
  void start(ChunkJob job);
  // Chunks not yet reported: in FITRIM, or waiting for their discards.
  std::size_t running() const { return chunks_.size() + settling_.size(); }
  // Runners not yet reaped (in FITRIM, or killed and leaving it).
  std::size_t in_kernel() const { return chunks_.size(); }
  bool running_job(std::uint64_t serial) const { return chunks_.count(serial) != 0; }
  // Kill on request: reported back as Stopped.
  void stop(std::uint64_t serial);
  void stop_all();
  // Runs the loop until every child has been reaped or `timeout` passed.
  bool drain(Duration timeout);
  // The runners' own block-layer bytes per disk since the last call, for the
  // idleness model (the same discounting as preemption).
  std::map<std::string, IoBytes> take_own_io();

 private:
  struct Chunk;
  struct Settling;
  void check_preemption();
  void check_time_limits();
  void check_settling(bool now_or_never);
  void settle(ChunkReport report, DiscardMeter meter);
  void report_done(ChunkReport report, const DiscardMeter& meter);
  void on_exit(std::uint64_t serial);
  void charge_kernel_reads(const Chunk& chunk);
  void log_preemption(const Chunk& chunk, const ChunkReport& report, std::int64_t exited_at);
  void charge_own_io(Chunk& chunk, IoBytes total);
  void arm_sampling();

  EventLoop& loop_;
  Sampler sample_;
  Duration interval_;
  OnDone on_done_;
  Timer timer_;
  std::map<std::uint64_t, std::unique_ptr<Chunk>> chunks_;       // FITRIM running
  std::map<std::uint64_t, std::unique_ptr<Settling>> settling_;  // FITRIM returned
  std::map<std::string, IoBytes> own_io_;
  // How runners reach their filesystems: probed at the start, and learned
  // from every runner that could not make a detached copy.
  MountHold hold_ = can_clone_mounts() ? MountHold::DetachedCopy : MountHold::MountItself;
};

}  // namespace trimd
