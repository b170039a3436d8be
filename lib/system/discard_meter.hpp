// The bytes one FITRIM call discarded, from /proc/diskstats.
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

 private:
  std::vector<std::string> devices_;
  std::vector<std::uint64_t> sectors_before_;  // per device, in the same order
  bool measurable_ = true;
  std::optional<std::uint64_t> bytes_;
};

}  // namespace trimd
