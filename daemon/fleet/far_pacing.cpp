#include "far_pacing.hpp"

#include <algorithm>

namespace trimd::fleet {

Duration FarPacing::next(SteadyPoint now, std::int64_t reach, std::int64_t ours) {
  Duration out = kFarReadFirst;
  if (at_ && reach <= reach_) {
    out = std::clamp<Duration>(last_ * 2, kFarReadFirst, kFarReadMax);  // the line stood still
  } else if (at_) {
    const auto elapsed = std::max<Duration>(std::chrono::duration_cast<Duration>(now - *at_),
                                            std::chrono::milliseconds{1});
    const auto revisions_left = static_cast<double>(std::max<std::int64_t>(ours - reach, 0));
    const auto per_revision =
        static_cast<double>(elapsed.count()) / static_cast<double>(reach - reach_);
    const auto half_way = Duration{static_cast<Duration::rep>(revisions_left * per_revision / 2)};
    out = std::clamp<Duration>(half_way, kFarReadMin, kFarReadMax);
  }
  at_ = now;
  reach_ = reach;
  last_ = out;
  return out;
}

void FarPacing::reset() {
  at_.reset();
  reach_ = 0;
  last_ = {};
}

Duration jittered(Duration delay, std::uint32_t random) {
  // random / 2^32 in [0, 1): a factor in [0.8, 1.2).
  const double factor = 0.8 + 0.4 * (static_cast<double>(random) / 4294967296.0);
  return Duration{static_cast<Duration::rep>(static_cast<double>(delay.count()) * factor)};
}

}  // namespace trimd::fleet
