#include "discard_meter.hpp"

#include <algorithm>

namespace trimd {

namespace {

const DiskStat* find_device(const std::vector<DiskStat>& sample, const std::string& name) {
  auto it =
      std::find_if(sample.begin(), sample.end(), [&](const DiskStat& s) { return s.name == name; });
  return it == sample.end() ? nullptr : &*it;
}

}  // namespace

DiscardMeter::DiscardMeter(std::vector<std::string> devices, const std::vector<DiskStat>& before)
    : devices_(std::move(devices)) {
  measurable_ = !devices_.empty();
  for (const auto& device : devices_) {
    const DiskStat* stat = find_device(before, device);
    if (!stat) measurable_ = false;
    sectors_before_.push_back(stat ? stat->counters.sectors_discarded : 0);
  }
}

bool DiscardMeter::settled(const std::vector<DiskStat>& sample) {
  if (!measurable_) return true;
  std::uint64_t sectors = 0;
  bool idle = true;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const DiskStat* stat = find_device(sample, devices_[i]);
    if (!stat || stat->counters.sectors_discarded < sectors_before_[i]) {
      measurable_ = false;
      bytes_.reset();
      return true;
    }
    sectors += stat->counters.sectors_discarded - sectors_before_[i];
    idle = idle && stat->counters.in_flight == 0;
  }
  bytes_ = sectors * kDiskstatsSectorBytes;
  return idle;
}

}  // namespace trimd
