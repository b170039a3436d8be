// The bytes one FITRIM call discarded, and the time its discards took, from
// /proc/diskstats.
//
// Counted on the filesystem's own block devices (the partition, the dm or md
// device it sits on, each member of a multi-device btrfs), never on the whole
// disks under them: a disk shared by two filesystems would count the other's
// discards too, and the lower devices of a stack see the same bytes again.
//
// The kernel counts a discard when it completes, and a filesystem may return
// from FITRIM before its discards do: xfs submits them asynchronously and
// does not wait (fs/xfs/xfs_discard.c, xfs_discard_extents()). So after the
// call returns the meter keeps reading samples until nothing is in flight on
// the devices, and counts what completed meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diskstats.hpp"
#include "time.hpp"

namespace trimd {

class DiscardMeter {
 public:
  // `devices`: kernel names as in /proc/diskstats ("loop0p1", "dm-0");
  // `before`: a sample taken before the call.
  DiscardMeter(std::vector<std::string> devices, const std::vector<DiskStat>& before);

  // Reads a sample taken after the call returned. True once the count is
  // final: nothing in flight on any device, or nothing left to measure (a
  // device vanished, or its counters went back: it was re-created).
  bool settled(const std::vector<DiskStat>& sample);

  // Bytes discarded from `before` to the latest sample; nothing when the
  // devices could not be measured.
  std::optional<std::uint64_t> bytes() const { return bytes_; }
  // Discards the devices completed from `before` to the latest sample.
  std::uint64_t discards() const { return discards_; }
  // The time they spent on those discards (the sum over each discard, in
  // the kernel's milliseconds; several in flight at once all count). Nothing
  // when the devices could not be measured, or count no discards at all
  // (their counter is still 0: a device that does not account them, zram
  // for one, or an older kernel).
  std::optional<Duration> discard_time() const { return discard_time_; }

 private:
  struct Before {
    std::uint64_t sectors = 0;
    std::uint64_t discards = 0;
    std::uint64_t ms = 0;
  };
  std::vector<std::string> devices_;
  std::vector<Before> before_;  // per device, in the same order
  bool measurable_ = true;
  std::optional<std::uint64_t> bytes_;
  std::uint64_t discards_ = 0;
  std::optional<Duration> discard_time_;
};

}  // namespace trimd
