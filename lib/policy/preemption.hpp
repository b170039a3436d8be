// Whether a chunk in the kernel must give way to foreground I/O, decided from
// the chunk's disks' /proc/diskstats and the runner's own I/O. Pure: the
// daemon feeds it samples and kills the runner when it says so.
//
// FITRIM reads free-space metadata (ext4 block bitmaps, xfs free-space btree
// blocks, btrfs free-space cache) and those reads show up in diskstats like
// anyone's. They are charged to the runner process that submitted them
// (/proc/PID/io read_bytes), so that many bytes are taken out of the disks'
// read and written sectors before anything counts as foreground.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diskstats.hpp"
#include "time.hpp"

namespace trimd {

// Bytes a process caused the block layer to read and write (/proc/PID/io
// read_bytes and write_bytes).
struct IoBytes {
  std::uint64_t read = 0;
  std::uint64_t write = 0;
  IoBytes& operator+=(const IoBytes& other) {
    read += other.read;
    write += other.write;
    return *this;
  }
  friend bool operator==(const IoBytes&, const IoBytes&) = default;
};

// `after - before`, 0 where a counter went back (a new process, a reset).
IoBytes io_delta(const IoBytes& before, const IoBytes& after);

// The reads and writes the disks saw, with `own` taken out. Reads first
// absorb the runner's read bytes; operations shrink in proportion.
struct ForegroundIo {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  double read_ops = 0;
  double write_ops = 0;
  bool any() const { return read_bytes > 0 || write_bytes > 0; }
};

// The disk counters' growth between two samples, less `own`.
ForegroundIo foreground_io(const DiskCounters& before, const DiskCounters& after, IoBytes own);

enum class PreemptReason { None, ForegroundRead, ForegroundWrite };
const char* to_string(PreemptReason reason);

struct PreemptDecision {
  PreemptReason reason = PreemptReason::None;
  std::string disk;  // where the foreground I/O was seen
  std::uint64_t foreground_bytes = 0;
  // With a tolerated latency: the mean wait of the disk's reads and writes
  // over the last sample, which went past it.
  Duration mean_latency{0};
  bool preempt() const { return reason != PreemptReason::None; }
};

// Reads a filesystem makes for FITRIM in a kernel worker rather than in the
// runner, so they are not in its read_bytes: btrfs loads a block group's
// free-space cache in its btrfs-cache worker (measured on 6.18: 96 KiB in 6
// reads for a 512 MiB filesystem, once per mount; 320 KiB in 20 reads in the
// first third of a cold 960 MiB chunk of W3's fragmented 3 GiB filesystem,
// so btrfs's allowance grows with the chunk: 1 KiB per MiB, 256 KiB to
// 1 MiB); on ext4 soon after a mount, 56-72 KiB of block-bitmap reads by no
// process of trimd's showed up during chunks of an otherwise idle 3 GiB
// filesystem (W3). Foreground reads below this are taken for those;
// foreground writes always count.
std::uint64_t unattributed_read_allowance(const std::string& fs_type,
                                          std::uint64_t chunk_length = 0);

// How long foreground I/O may wait on average, over one sample, on a disk
// that queues its discards before a chunk gives way there ([idle]
// preempt_latency = "auto"). Queued discards take queue slots, not the
// disk: on the queued model a QD32 reader at 1000 IOPS kept its no-trim p99
// under a chunk (1.18x [0.86-4.07] over 5 rounds) while the pass gave back
// 63 MiB, where killing every chunk gave back 1.4; on the exclusive model
// the same reads waited 46-55 ms at p99 (docs/preemption.md).
constexpr Duration kQueuedPreemptLatency = std::chrono::milliseconds{4};

// One chunk's watch: the counters when it started, then a decision per
// sample. Deltas are taken from the start, not sample to sample: the runner's
// read_bytes grow when a read is submitted and diskstats when it completes,
// so per-interval differences would see its reads in flight as foreground.
// With a `tolerated_latency`, foreground I/O preempts only in a sample where
// the disk's completed reads and writes waited longer than that on average.
class PreemptionWatch {
 public:
  PreemptionWatch(const std::vector<std::string>& disks, const std::vector<DiskStat>& sample,
                  IoBytes runner, std::uint64_t read_allowance = 0,
                  Duration tolerated_latency = Duration{0});
  // The decision for a sample taken later; `runner` is the runner's total.
  PreemptDecision observe(const std::vector<DiskStat>& sample, IoBytes runner);

 private:
  // The mean wait since the last sample, when it was over the tolerance.
  std::optional<Duration> waited_too_long(const std::string& disk, const DiskCounters& now);

  std::map<std::string, DiskCounters> start_;
  std::map<std::string, DiskCounters> last_;
  IoBytes runner_start_;
  std::uint64_t read_allowance_;
  Duration tolerated_latency_;
};

}  // namespace trimd
