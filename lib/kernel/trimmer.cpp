// FITRIM, one chunk per call. The mount point is opened for this call only,
// so trimd pins a filesystem (umount fails with EBUSY) only while a chunk is
// in the kernel, and the daemon kills a chunk past its time limit
// (chunk_time_limit in chunk_sizing.hpp): that is the bound.
#include "trimmer.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <system_error>

#include "unique_fd.hpp"

namespace trimd {

namespace {

// std::error_code goes through strerror_r: safe on the worker threads.
std::string describe(int error) {
  return std::error_code(error, std::generic_category()).message();
}

std::string device_name(dev_t device) {
  return std::to_string(major(device)) + ":" + std::to_string(minor(device));
}

TrimOutcome failure(TrimStatus status, int error, std::string message) {
  TrimOutcome outcome;
  outcome.status = status;
  outcome.error = error;
  outcome.message = std::move(message);
  return outcome;
}

// `what` failed with `error`; EINVAL is read in the light of the range start.
TrimOutcome syscall_failure(const std::string& what, int error, std::uint64_t range_start = 0) {
  return failure(classify_trim_errno(error, range_start), error, what + ": " + describe(error));
}

}  // namespace

const char* to_string(TrimStatus status) {
  switch (status) {
    case TrimStatus::Ok: return "ok";
    case TrimStatus::Unsupported: return "unsupported";
    case TrimStatus::PastEnd: return "past-end";
    case TrimStatus::Gone: return "gone";
    case TrimStatus::Error: return "error";
  }
  return "unknown";
}

TrimStatus classify_trim_errno(int error) { return classify_trim_errno(error, 0); }

TrimStatus classify_trim_errno(int error, std::uint64_t range_start) {
  switch (error) {
    // The filesystem (or the device under it) cannot discard: asking again
    // will not change that. EBADF is what some filesystems answer FITRIM with.
    case EOPNOTSUPP:
    case ENOTTY:
    case ENOSYS:
    case EBADF:
      return TrimStatus::Unsupported;
    // The mount point vanished, was replaced by something else, or its
    // device went away. EROFS belongs here too: the mount cannot take a trim
    // in its current state (xfs mounted with norecovery), but a remount
    // changes that, so wait for the mount table instead of failing the pass.
    case ENOENT:
    case ENODEV:
    case ENXIO:
    case ESTALE:
    case ENOTDIR:
    case EROFS:
      return TrimStatus::Gone;
    case EINVAL:
      return range_start > 0 ? TrimStatus::PastEnd : TrimStatus::Error;
    default:
      return TrimStatus::Error;
  }
}

RawTrim fitrim_raw(const char* mount_point, dev_t device, const TrimRange& range) noexcept {
  RawTrim raw;
  UniqueFd fd(::open(mount_point, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return RawTrim{RawTrim::Open, errno, 0, 0};
  // After an unmount the mount point is a plain directory of the parent
  // filesystem; without this check we would trim the filesystem underneath.
  if (device != 0) {
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return RawTrim{RawTrim::Stat, errno, 0, 0};
    if (st.st_dev != device) return RawTrim{RawTrim::WrongDevice, ESTALE, 0, st.st_dev};
  }
  struct fstrim_range kernel_range {};
  kernel_range.start = range.start;
  kernel_range.len = range.len;
  kernel_range.minlen = range.minlen;
  if (::ioctl(fd.get(), FITRIM, &kernel_range) != 0) return RawTrim{RawTrim::Ioctl, errno, 0, 0};
  raw.bytes = kernel_range.len;
  return raw;
}

TrimOutcome outcome_of(const RawTrim& raw, const TrimTarget& target, const TrimRange& range) {
  const std::string& where = target.mount_point;
  switch (raw.step) {
    case RawTrim::Done: {
      TrimOutcome outcome;
      outcome.bytes_reported = raw.bytes;
      return outcome;
    }
    case RawTrim::Open: return syscall_failure("cannot open " + where, raw.error);
    case RawTrim::Stat: return syscall_failure("cannot stat " + where, raw.error);
    case RawTrim::WrongDevice:
      return failure(TrimStatus::Gone, ESTALE,
                     where + " is no longer the filesystem on " + device_name(target.device) +
                         " (now " + device_name(static_cast<dev_t>(raw.seen_device)) +
                         "): not trimming");
    default:
      return syscall_failure("FITRIM on " + where + " failed", raw.error, range.start);
  }
}

TrimOutcome FitrimTrimmer::trim(const TrimTarget& target, const TrimRange& range) {
  return outcome_of(fitrim_raw(target.mount_point.c_str(), target.device, range), target, range);
}

}  // namespace trimd
