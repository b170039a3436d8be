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
    before_.push_back(stat ? Before{stat->counters.sectors_discarded,
                                    stat->counters.discards_completed, stat->counters.ms_discarding}
                           : Before{});
  }
}

bool DiscardMeter::settled(const std::vector<DiskStat>& sample) {
  if (!measurable_) return true;
  std::uint64_t sectors = 0;
  std::uint64_t discards = 0;
  std::uint64_t ms = 0;
  std::uint64_t ever_counted = 0;
  bool idle = true;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    const DiskStat* stat = find_device(sample, devices_[i]);
    const DiskCounters* now = stat ? &stat->counters : nullptr;
    const Before& before = before_[i];
    if (!now || now->sectors_discarded < before.sectors ||
        now->discards_completed < before.discards || now->ms_discarding < before.ms) {
      measurable_ = false;
      bytes_.reset();
      discards_ = 0;
      discard_time_.reset();
      return true;
    }
    sectors += now->sectors_discarded - before.sectors;
    discards += now->discards_completed - before.discards;
    ms += now->ms_discarding - before.ms;
    ever_counted += now->discards_completed;
    idle = idle && now->in_flight == 0;
  }
  bytes_ = sectors * kDiskstatsSectorBytes;
  discards_ = discards;
  if (ever_counted > 0) discard_time_ = std::chrono::milliseconds{ms};
  return idle;
}

}  // namespace trimd
