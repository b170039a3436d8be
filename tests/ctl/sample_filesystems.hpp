// The fake's usual state: /mnt/fast (ext4, trimmed three days ago, the
// next pass succeeds) and /data (xfs, mounted with discard, never trimmed,
// the next pass fails). Times are relative to now.
#pragma once

#include <chrono>
#include <vector>

#include "fake_trimd.hpp"

namespace trimctl_test {

inline constexpr uint64_t kUsecPerSecond = 1000000;
inline constexpr uint64_t kFastLastBytes = 1610612736;  // 1.5 GiB
inline constexpr uint64_t kFastNextBytes = 1288490189;  // 1.2 GiB
inline constexpr uint64_t kFastNextUsec = 12300000;     // 12.3 s

inline uint64_t realtime_usec() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<microseconds>(system_clock::now().time_since_epoch()).count());
}

inline FakeFilesystem fast_filesystem(uint64_t now) {
  FakeFilesystem fs;
  fs.id = "fast";
  fs.mount_point = "/mnt/fast";
  fs.device = "/dev/nvme0n1p2";
  fs.fs_type = "ext4";
  fs.uuid = "3b1c0d6e-41f2-4a55-9d0e-7c1e2f3a4b5c";
  fs.backing_disks = {"nvme0n1"};
  fs.state = "scheduled";
  fs.size = 512ull << 30;
  fs.last_trim_end = now - (3 * 24 * 3600 + 300) * kUsecPerSecond;  // 3 days ago
  fs.last_trim_start = fs.last_trim_end - 20 * kUsecPerSecond;
  fs.last_result = "success";
  fs.last_bytes_trimmed = kFastLastBytes;
  fs.next_trim = now + (2 * 3600 + 30) * kUsecPerSecond;  // 2h left
  fs.next_bytes = kFastNextBytes;
  fs.next_usec = kFastNextUsec;
  return fs;
}

inline FakeFilesystem data_filesystem(uint64_t now) {
  FakeFilesystem fs;
  fs.id = "data";
  fs.mount_point = "/data";
  fs.device = "/dev/sdb1";
  fs.fs_type = "xfs";
  fs.backing_disks = {"sdb"};
  fs.state = "waiting";
  fs.state_reason = "disk sdb is busy";
  fs.waiting_for = "disks_busy";
  fs.size = 2ull << 40;
  fs.next_trim = now - 600 * kUsecPerSecond;  // due ten minutes ago
  fs.inline_discard = true;
  fs.discard_mode = "sync";
  fs.takeover = "inline";
  fs.next_result = "failed: Input/output error";
  fs.next_usec = 1000000;
  return fs;
}

inline std::vector<FakeFilesystem> sample_filesystems() {
  const uint64_t now = realtime_usec();
  return {fast_filesystem(now), data_filesystem(now)};
}

}  // namespace trimctl_test
