// The manager on a fake clock, fake disks and a test-driven "kernel": the
// test decides how each chunk job ends. Shared by the manager's unit tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>

#include "manager.hpp"

namespace trimd::test {

using namespace std::chrono_literals;

constexpr std::uint64_t GiB = 1ull << 30;

inline DiscoveredFs make_fs(const std::string& mount_point, const std::string& disk,
                            std::uint64_t size = 10 * GiB, const std::string& type = "ext4") {
  DiscoveredFs fs;
  fs.mount.mount_point = mount_point;
  fs.mount.source = "/dev/" + disk;
  fs.mount.fs_type = type;
  fs.mount.major = 7;
  fs.mount.minor = 0;
  fs.uuid = "uuid-of-" + disk + mount_point;
  fs.id = filesystem_id(fs.uuid, fs.mount);
  BlockDisk d;
  d.name = disk;
  d.size_bytes = size;
  d.discard_max_bytes = 4 * GiB;
  fs.topology.devices = {d};
  fs.topology.disks = {d};
  fs.geometry.fs_type = type;
  fs.geometry.size_bytes = size;
  return fs;
}

inline Config quick_config() {
  Config config;
  config.idle.idle_window = 5s;
  config.trim.schedule.first_delay = 0s;
  config.trim.schedule.randomized_delay = 0s;
  config.trim.chunk_pause = 0s;
  config.trim.chunk_time = 0s;  // fixed chunks unless a test sizes them by time
  return config;
}

// Drives a manager through time with a set of disks whose write counters
// grow only while they are "busy".
class ManagerTest : public ::testing::Test {
 protected:
  TimePoint now = Clock::from_time_t(1'800'000'000);
  // The monotonic clock: moves with `now`, except when a test steps the wall clock.
  SteadyPoint mono = SteadyPoint{} + std::chrono::hours{1};

  template <typename Rep, typename Period>
  void advance(std::chrono::duration<Rep, Period> d) {
    now += std::chrono::duration_cast<Clock::duration>(d);
    mono += std::chrono::duration_cast<SteadyClock::duration>(d);
  }
  std::map<std::string, DiskCounters> disks;
  std::set<std::string> busy;

  std::unique_ptr<Manager> make(Config config = quick_config(), StateMap state = {}) {
    auto m = std::make_unique<Manager>(std::move(config), std::move(state), now);
    return m;
  }

  void sample(Manager& m) {
    std::vector<DiskStat> stats;
    for (auto& [name, c] : disks) {
      if (busy.count(name)) {
        c.writes_completed += 5000;
        c.sectors_written += 5000 * 8;
        c.ms_writing += 900;
      }
      stats.push_back(DiskStat{7, 0, name, c});
    }
    m.observe_diskstats(stats, now);
  }

  // Let `seconds` pass, sampling once a second.
  void pass_time(Manager& m, int seconds) {
    for (int i = 0; i < seconds; ++i) {
      advance(1s);
      sample(m);
    }
  }

  static ChunkResult ok(const ChunkJob& job, std::uint64_t discarded = 1000) {
    ChunkResult r;
    r.outcome.status = TrimStatus::Ok;
    r.outcome.bytes_reported = job.range.len;
    r.bytes_discarded = discarded;
    r.elapsed = 1ms;
    return r;
  }

  static ChunkResult failed(TrimStatus status) {
    ChunkResult r;
    r.outcome.status = status;
    r.outcome.message = "simulated";
    return r;
  }

  // A state in which `fs` had a successful pass that ended at `when`.
  static StateMap trimmed_at(const DiscoveredFs& fs, TimePoint when) {
    StateMap state;
    state[fs.id].last_end = when;
    state[fs.id].last_result = PassOutcome{PassResult::Success, {}};
    return state;
  }

  // Track `fs`, keep its disk quiet past the idle window, take the first chunk.
  std::vector<ChunkJob> track_and_start(Manager& m, const DiscoveredFs& fs) {
    m.update_filesystems({fs}, now);
    pass_time(m, 6);
    return m.take_jobs(now, mono);
  }

  // Run chunks (each succeeding) until none is handed out; returns how many.
  int run_to_completion(Manager& m, int max_chunks = 1000) {
    int chunks = 0;
    for (int guard = 0; guard < max_chunks; ++guard) {
      auto jobs = m.take_jobs(now, mono);
      if (jobs.empty()) break;
      for (auto& job : jobs) {
        m.chunk_finished(job, ok(job), now, mono);
        ++chunks;
      }
      advance(1ms);
    }
    return chunks;
  }
};

class RecordingListener : public ManagerListener {
 public:
  std::vector<std::string> events;
  void filesystem_added(const FsStatus& s) override { events.push_back("added " + s.mount_point); }
  void filesystem_removed(const std::string& id) override { events.push_back("removed " + id); }
  void trim_started(const std::string& id) override { events.push_back("started " + id); }
  void trim_finished(const std::string& id, const PassOutcome& outcome, std::uint64_t bytes,
                     Duration) override {
    events.push_back("finished " + id + " " + outcome.text() + " " + std::to_string(bytes));
  }
};

}  // namespace trimd::test
