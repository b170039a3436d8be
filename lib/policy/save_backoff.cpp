#include "save_backoff.hpp"

#include <algorithm>

namespace trimd {
namespace {

using namespace std::chrono_literals;
constexpr Duration kFirstDelay = 1s;
constexpr Duration kMaxDelay = 5min;

}  // namespace

spdlog::level::level_enum failed_save_level(bool new_reason, SaveAttempt attempt) {
  if (new_reason) return spdlog::level::err;
  return attempt == SaveAttempt::Last ? spdlog::level::warn : spdlog::level::debug;
}

bool SaveBackoff::may_try(TimePoint now) const { return delay_.count() == 0 || now >= next_try_; }

bool SaveBackoff::failed(const std::string& why, TimePoint now) {
  delay_ = delay_.count() == 0 ? kFirstDelay : std::min(delay_ * 2, kMaxDelay);
  next_try_ = saturating_add(now, delay_);
  if (why == last_reason_) return false;
  last_reason_ = why;
  return true;
}

bool SaveBackoff::succeeded() {
  const bool was_failing = delay_.count() != 0;
  delay_ = Duration{0};
  last_reason_.clear();
  return was_failing;
}

}  // namespace trimd
