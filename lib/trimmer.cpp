// FITRIM, one chunk per call. The mount point is opened for this call only,
// so trimd never pins a filesystem (umount would fail with EBUSY otherwise).
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

// After an unmount the mount point is a plain directory of the parent
// filesystem; without this check we would trim the filesystem underneath.
std::optional<TrimOutcome> check_still_mounted(const TrimTarget& target, int fd) {
  if (target.device == 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;  // read before building strings can clobber it
    return syscall_failure("cannot stat " + target.mount_point, error);
  }
  if (st.st_dev == target.device) return std::nullopt;
  return failure(TrimStatus::Gone, ESTALE,
                 target.mount_point + " is no longer the filesystem on " +
                     device_name(target.device) + " (now " + device_name(st.st_dev) +
                     "): not trimming");
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

TrimOutcome FitrimTrimmer::trim(const TrimTarget& target, const TrimRange& range) {
  UniqueFd fd(::open(target.mount_point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    return syscall_failure("cannot open " + target.mount_point, error);
  }
  if (auto gone = check_still_mounted(target, fd.get())) return *gone;

  struct fstrim_range kernel_range {};
  kernel_range.start = range.start;
  kernel_range.len = range.len;
  kernel_range.minlen = range.minlen;
  if (::ioctl(fd.get(), FITRIM, &kernel_range) != 0) {
    const int error = errno;
    return syscall_failure("FITRIM on " + target.mount_point + " failed", error, range.start);
  }

  TrimOutcome outcome;
  outcome.bytes_reported = kernel_range.len;
  return outcome;
}

}  // namespace trimd
