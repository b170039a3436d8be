// The narrow interface around FITRIM. The real one opens the mount point only
// for the duration of one call, so trimd never keeps a filesystem busy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "planner.hpp"

namespace trimd {

enum class TrimStatus {
  Ok,           // the chunk was trimmed
  Unsupported,  // EOPNOTSUPP, ENOTTY, ENOSYS, EBADF: never try this filesystem again
  PastEnd,      // the range starts beyond the filesystem: the pass is complete
  Gone,         // unmounted, replaced, or its device vanished: retry later
  Error,        // anything else: the pass failed
};

const char* to_string(TrimStatus status);

struct TrimOutcome {
  TrimStatus status = TrimStatus::Ok;
  std::uint64_t bytes_reported = 0;  // what FITRIM wrote back into range.len
  int error = 0;                     // errno for everything but Ok
  std::string message;               // human-readable, includes strerror
};

struct TrimTarget {
  std::string mount_point;
  dev_t device = 0;  // st_dev the mount point must still have; 0 = don't check
};

class Trimmer {
 public:
  virtual ~Trimmer() = default;
  virtual TrimOutcome trim(const TrimTarget& target, const TrimRange& range) = 0;
};

// Real FITRIM. Thread-safe: it holds no state.
class FitrimTrimmer final : public Trimmer {
 public:
  TrimOutcome trim(const TrimTarget& target, const TrimRange& range) override;
};

// Map an errno from open()/ioctl(FITRIM) to a status, for a range starting at 0.
TrimStatus classify_trim_errno(int error);

// The same, for a range starting at `range_start`: EINVAL past 0 means the
// start lies beyond the end of the filesystem (ext4 and xfs say so), which
// ends a pass; EINVAL at 0 is a real error.
TrimStatus classify_trim_errno(int error, std::uint64_t range_start);

}  // namespace trimd
