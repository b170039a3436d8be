#include "preemption.hpp"

#include <algorithm>
#include <utility>

#include "fs_kind.hpp"

namespace trimd {

namespace {

std::uint64_t minus(std::uint64_t after, std::uint64_t before) {
  return after > before ? after - before : 0;
}

const DiskCounters* find_disk(const std::vector<DiskStat>& sample, const std::string& name) {
  for (const DiskStat& stat : sample)
    if (stat.name == name) return &stat.counters;
  return nullptr;
}

// `ops` scaled by the share of `bytes` that remained after the discount.
double remaining_ops(std::uint64_t ops, std::uint64_t bytes, std::uint64_t remaining) {
  if (bytes == 0) return static_cast<double>(ops);
  return static_cast<double>(ops) * static_cast<double>(remaining) / static_cast<double>(bytes);
}

}  // namespace

IoBytes io_delta(const IoBytes& before, const IoBytes& after) {
  return IoBytes{minus(after.read, before.read), minus(after.write, before.write)};
}

ForegroundIo foreground_io(const DiskCounters& before, const DiskCounters& after, IoBytes own) {
  const std::uint64_t read = minus(after.sectors_read, before.sectors_read) * kDiskstatsSectorBytes;
  const std::uint64_t written =
      minus(after.sectors_written, before.sectors_written) * kDiskstatsSectorBytes;
  ForegroundIo io;
  io.read_bytes = minus(read, own.read);
  io.write_bytes = minus(written, own.write);
  io.read_ops =
      remaining_ops(minus(after.reads_completed, before.reads_completed), read, io.read_bytes);
  io.write_ops = remaining_ops(minus(after.writes_completed, before.writes_completed), written,
                               io.write_bytes);
  return io;
}

const char* to_string(PreemptReason reason) {
  switch (reason) {
    case PreemptReason::None: return "none";
    case PreemptReason::ForegroundRead: return "foreground read";
    case PreemptReason::ForegroundWrite: return "foreground write";
  }
  return "unknown";
}

std::uint64_t unattributed_read_allowance(const std::string& fs_type, std::uint64_t chunk_length) {
  const FsKind kind = fs_kind(fs_type);
  if (kind == FsKind::Btrfs)
    return std::clamp<std::uint64_t>(chunk_length / 1024, 256 * 1024, 1024 * 1024);
  if (kind == FsKind::Ext4) return 128 * 1024;
  return 0;
}

PreemptionWatch::PreemptionWatch(const std::vector<std::string>& disks,
                                 const std::vector<DiskStat>& sample, IoBytes runner,
                                 std::uint64_t read_allowance, Duration tolerated_latency)
    : runner_start_(runner), read_allowance_(read_allowance),
      tolerated_latency_(tolerated_latency) {
  for (const std::string& disk : disks)
    if (const DiskCounters* c = find_disk(sample, disk)) start_[disk] = last_[disk] = *c;
}

std::optional<Duration> PreemptionWatch::waited_too_long(const std::string& disk,
                                                         const DiskCounters& now) {
  const DiskCounters before = std::exchange(last_[disk], now);
  const std::uint64_t ops = minus(now.reads_completed, before.reads_completed) +
                            minus(now.writes_completed, before.writes_completed);
  const std::uint64_t waited_ms =
      minus(now.ms_reading, before.ms_reading) + minus(now.ms_writing, before.ms_writing);
  if (ops == 0) return std::nullopt;
  const Duration mean =
      Duration{std::chrono::milliseconds{waited_ms}} / static_cast<std::int64_t>(ops);
  if (mean < tolerated_latency_) return std::nullopt;
  return mean;
}

PreemptDecision PreemptionWatch::observe(const std::vector<DiskStat>& sample, IoBytes runner) {
  // The runner's bytes are not split by disk: each disk's growth absorbs
  // what is left of them in turn, so none is counted twice.
  IoBytes own = io_delta(runner_start_, runner);
  own.read += read_allowance_;
  PreemptDecision decision;
  for (const auto& [disk, start] : start_) {
    const DiskCounters* now = find_disk(sample, disk);
    if (!now) continue;  // gone: the chunk reports back as Gone
    const ForegroundIo io = foreground_io(start, *now, own);
    const std::uint64_t read = minus(now->sectors_read, start.sectors_read) * kDiskstatsSectorBytes;
    const std::uint64_t written =
        minus(now->sectors_written, start.sectors_written) * kDiskstatsSectorBytes;
    own = IoBytes{minus(own.read, read), minus(own.write, written)};
    std::optional<Duration> waited;
    if (tolerated_latency_.count() > 0) waited = waited_too_long(disk, *now);
    if (!io.any()) continue;
    if (tolerated_latency_.count() > 0 && !waited) continue;  // it did not wait for the chunk
    decision.mean_latency = waited.value_or(Duration{0});
    decision.reason =
        io.write_bytes > 0 ? PreemptReason::ForegroundWrite : PreemptReason::ForegroundRead;
    decision.disk = disk;
    decision.foreground_bytes = io.read_bytes + io.write_bytes;
    return decision;
  }
  return decision;
}

}  // namespace trimd
