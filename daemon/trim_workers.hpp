// FITRIM blocks for as long as the device takes, so each chunk runs on its
// own worker thread. The manager guarantees at most one chunk per disk, so the
// number of threads is bounded by the number of disks. Results come back to
// the loop thread through an eventfd.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "event_loop.hpp"
#include "manager.hpp"
#include "trimmer.hpp"

namespace trimd {

class TrimWorkers {
 public:
  using OnDone = std::function<void(const ChunkJob&, const ChunkResult&)>;

  TrimWorkers(EventLoop& loop, Trimmer& trimmer, OnDone on_done);
  ~TrimWorkers();  // joins finished threads; detaches any still in the kernel

  void start(ChunkJob job);
  std::size_t running() const { return threads_.size(); }
  // Run the loop until every chunk has reported back or `timeout` passed.
  // Returns true when none is left running.
  bool drain(Duration timeout);

 private:
  struct Finished {
    ChunkJob job;
    ChunkResult result;
  };
  void run_chunk(ChunkJob job);
  void collect();

  EventLoop& loop_;
  Trimmer& trimmer_;
  OnDone on_done_;
  UniqueFd event_fd_;
  std::mutex mutex_;
  std::vector<Finished> finished_;  // guarded by mutex_
  std::map<std::uint64_t, std::thread> threads_;
};

// Sum of discarded bytes over `disks` from /proc/diskstats (nothing when the
// file cannot be read or a disk is missing).
std::optional<std::uint64_t> discarded_bytes(const std::vector<std::string>& disks);

}  // namespace trimd
