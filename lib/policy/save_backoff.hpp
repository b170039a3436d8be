// When to try saving the state again after a save failed, and whether to
// say so: a full disk or a bad state directory must not fill the journal
// with one error per loop turn. Each new reason is logged once; retries back
// off from a second to five minutes.
#pragma once

#include <string>

#include <spdlog/common.h>

#include "time.hpp"

namespace trimd {

// A save while trimd runs is retried; the one as it stops is its last.
enum class SaveAttempt { Periodic, Last };

// How loud a failed save is logged: a new reason (SaveBackoff::failed()
// said so) is an error; a repeated one is debug while retries follow, but a
// warning at the last attempt, because what it held is lost.
spdlog::level::level_enum failed_save_level(bool new_reason, SaveAttempt attempt);

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
