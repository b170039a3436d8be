#include "duty.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "units.hpp"

namespace trimd {

DutyBudget duty_budget(double trim_duty, std::string_view disks, double fleet_duty,
                       unsigned max_concurrent, std::string_view backend) {
  DutyBudget budget;
  if (trim_duty > 0) budget = DutyBudget{trim_duty, std::string(disks)};
  if (fleet_duty > 0 && !backend.empty()) {
    const double slot_share = fleet_duty / std::max(max_concurrent, 1u);
    if (budget.share <= 0 || slot_share < budget.share)
      budget = DutyBudget{slot_share, std::string(backend)};
  }
  return budget;
}

Duration chunk_device_time(Duration span, std::optional<Duration> discard_time) {
  span = std::max(span, Duration{0});
  if (!discard_time) return span;
  return std::clamp(*discard_time, Duration{0}, span);
}

Duration duty_pause(Duration busy, double share) {
  if (!(share > 0) || share >= 1 || busy <= Duration{0}) return Duration{0};
  const double pause = static_cast<double>(busy.count()) * (1 / share - 1);
  const auto limit = static_cast<double>(kMaxDutyPause.count());
  return Duration{static_cast<Duration::rep>(std::min(std::ceil(pause), limit))};
}

std::string pacing_text(const DutyBudget& budget, Duration left, std::string_view next) {
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(std::max(left, Duration{0}));
  return fmt::format("pacing: {} of {}'s time, {} in {}", format_share(budget.share), budget.of,
                     next, format_duration(seconds));
}

}  // namespace trimd
