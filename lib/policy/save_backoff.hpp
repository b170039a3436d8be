// When to try saving the state again after a save failed, and whether to
// say so: a full disk or a bad state directory must not fill the journal
// with one error per loop turn. Each new reason is logged once; retries back
// off from a second to five minutes.
#pragma once

#include <string>

#include "time.hpp"

namespace trimd {

class SaveBackoff {
 public:
  // False while backing off after a failure.
  bool may_try(TimePoint now) const;
  // Records a failure; true when `why` differs from the last one logged.
  bool failed(const std::string& why, TimePoint now);
  // Records a success; true when it ends a run of failures.
  bool succeeded();

  Duration current_delay() const { return delay_; }

 private:
  std::string last_reason_;
  Duration delay_{0};
  TimePoint next_try_{};
};

}  // namespace trimd
