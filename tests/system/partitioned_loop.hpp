// Several filesystems on one disk: a LoopImage with a partition table, its
// partitions scanned by the kernel (loop3p1, loop3p2, ...), each partition
// given a filesystem and a mount point of its own. Torn down on every way
// out, as a LoopImage is: each mount has its own cleanup slot.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loopfs.hpp"

namespace trimd::test {

// One partition's filesystem and mount point (in its own temp dir).
class PartitionMount {
 public:
  explicit PartitionMount(std::string device);  // "/dev/loop3p1"
  ~PartitionMount();                            // unmounts; never throws
  PartitionMount(const PartitionMount&) = delete;
  PartitionMount& operator=(const PartitionMount&) = delete;

  void mkfs(Fs fs);  // as LoopImage::mkfs
  void mount(const std::string& options = "");
  void unmount();

  const std::string& device() const { return device_; }
  std::string name() const { return device_.substr(5); }  // "loop3p1", as in /proc/diskstats
  const std::string& mount_point() const { return mount_point_; }

 private:
  std::string device_;
  std::string dir_;
  std::string mount_point_;
  std::optional<Fs> fs_;
  int lock_fd_ = -1;  // flock on dir_: a concurrent run's sweep leaves it alone
  int slot_ = -1;
  bool mounted_ = false;
};

class PartitionedImage {
 public:
  // A sparse image of `size_mib` MiB cut into `partitions` equal MBR
  // partitions (sfdisk), attached with the kernel's partition scan on and
  // the partitions added (partx).
  static PartitionedImage create(std::uint64_t size_mib, std::size_t partitions);

  PartitionedImage(PartitionedImage&&) noexcept = default;
  // The partitions unmount first (members go in reverse), then the image.
  ~PartitionedImage() = default;

  PartitionMount& partition(std::size_t number) { return *partitions_.at(number - 1); }  // 1-based
  const LoopImage& disk() const { return disk_; }

 private:
  explicit PartitionedImage(LoopImage disk) : disk_(std::move(disk)) {}

  LoopImage disk_;
  std::vector<std::unique_ptr<PartitionMount>> partitions_;
};

}  // namespace trimd::test
