// Which block devices sit under a filesystem, read from sysfs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "mountinfo.hpp"

namespace trimd {

// Whether the disk queues a discard beside reads and writes (NVMe's
// Deallocate, SATA's queued TRIM) or drains its queue for it (SATA's
// non-queued TRIM: nothing else runs meanwhile). Unknown is treated as
// exclusive, the case that hurts foreground I/O.
enum class DiscardQueueing { Unknown, Exclusive, Queued };
const char* to_string(DiscardQueueing queueing);  // "unknown", "exclusive", "queued"

struct BlockDisk {
  std::string name;  // kernel name as in /proc/diskstats: sda, loop3, nvme0n1, dm-0
  unsigned major = 0;
  unsigned minor = 0;
  std::uint64_t size_bytes = 0;
  std::uint64_t discard_granularity = 0;  // queue/discard_granularity
  std::uint64_t discard_max_bytes = 0;    // queue/discard_max_bytes; 0 = no discard
  bool rotational = false;                // queue/rotational
  DiscardQueueing discard_queueing = DiscardQueueing::Unknown;

  bool supports_discard() const { return discard_max_bytes > 0; }
};

struct Topology {
  // The devices the filesystem itself sits on (a partition, dm-0, loop0;
  // several for a multi-device btrfs). Discard support is judged here.
  std::vector<BlockDisk> devices;
  // The whole physical disks at the bottom of the stack (partition -> disk,
  // dm/md -> slaves, recursively). Idleness and the one-trim-per-disk rule
  // are judged here. Never empty when `devices` is not.
  std::vector<BlockDisk> disks;
};

// The narrow interface the engine sees; tests use a fake.
class BlockInventory {
 public:
  virtual ~BlockInventory() = default;
  // Empty topology for filesystems not backed by block devices.
  virtual Topology topology_of(const MountEntry& mount) = 0;
};

// Reads /sys/dev/block, /sys/class/block and /sys/fs/btrfs under `sysfs_root`.
// Filesystems whose superblock has an anonymous device number (btrfs) are
// resolved through their source: stat() of the device node, else its kernel
// name under <sysfs>/class/block; the other members of a multi-device btrfs
// come from <sysfs>/fs/btrfs/<uuid>/devices.
class SysfsBlockInventory final : public BlockInventory {
 public:
  explicit SysfsBlockInventory(std::filesystem::path sysfs_root = "/sys");
  Topology topology_of(const MountEntry& mount) override;

  // One device by major:minor, with its attributes; name empty when unknown.
  BlockDisk describe(unsigned major, unsigned minor) const;

 private:
  std::filesystem::path sysfs_root_;
};

}  // namespace trimd
