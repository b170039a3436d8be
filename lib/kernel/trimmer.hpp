// The narrow interface around FITRIM. The real one opens the mount point only
// for the duration of one call, so trimd never keeps a filesystem busy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "fs_types.hpp"
#include "mount_identity.hpp"

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
  // The mount discovery decided on; FITRIM goes to that one or nowhere. Its
  // fields that are 0 are not checked ({path, st_dev} checks the device only).
  MountIdentity identity;
};

// One FITRIM attempt in plain integers: what a forked child computes without
// allocating (it may only make async-signal-safe calls) and hands back to
// the daemon through a pipe. The daemon turns it into a TrimOutcome.
struct RawTrim {
  enum Step : std::int32_t {
    Done = 0,
    Open = 1,
    Stat = 2,
    WrongDevice = 3,
    Ioctl = 4,
    WrongMount = 5
  };
  std::int32_t step = Done;
  std::int32_t error = 0;         // errno of the failed step
  std::uint64_t bytes = 0;        // range.len as the kernel wrote it back
  std::uint64_t seen_device = 0;  // st_dev found at the mount point (WrongDevice)
  std::int32_t mismatch = 0;      // IdentityMismatch (WrongMount)
  // errno of open_tree when no detached copy of the mount could be made and
  // FITRIM ran on the mount itself (which then stays busy for umount); 0 else.
  std::int32_t clone_error = 0;
};

// Opens the mount point without following symlinks, checks target.identity
// on that fd (statx, fstatfs), trims through a detached copy of the mount
// (clone_mount) so that umount never waits for the chunk, and closes. Only
// system calls: safe between fork() and _exit().
RawTrim fitrim_raw(const TrimTarget& target, const TrimRange& range) noexcept;
TrimOutcome outcome_of(const RawTrim& raw, const TrimTarget& target, const TrimRange& range);

// fitrim_raw() and outcome_of() in one call, in this process: for tests and
// tools. trimd itself runs fitrim_raw() in a runner child (runner_process.hpp).
TrimOutcome fitrim(const TrimTarget& target, const TrimRange& range);

// Map an errno from open()/ioctl(FITRIM) to a status, for a range starting at 0.
TrimStatus classify_trim_errno(int error);

// The same, for a range starting at `range_start`: EINVAL past 0 means the
// start lies beyond the end of the filesystem (ext4 and xfs say so), which
// ends a pass; EINVAL at 0 is a real error.
TrimStatus classify_trim_errno(int error, std::uint64_t range_start);

}  // namespace trimd
