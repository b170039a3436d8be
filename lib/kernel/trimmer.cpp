// FITRIM, one chunk per call, on exactly the mount discovery decided on. The
// mount point is opened for this call only and its identity checked on that
// fd; FITRIM then goes through a detached copy of the mount, so even a chunk
// in the kernel does not keep umount from succeeding (docs/preemption.md).
// Without the copy (open_tree refused) the mount is pinned while the chunk
// runs, and the chunk's time limit (chunk_sizing.hpp) is the bound.
#include "trimmer.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <atomic>
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
    case EBADF: return TrimStatus::Unsupported;
    // The mount point vanished, was replaced by something else, or its
    // device went away. EROFS belongs here too: the mount cannot take a trim
    // in its current state (xfs mounted with norecovery), but a remount
    // changes that, so wait for the mount table instead of failing the pass.
    case ENOENT:
    case ENODEV:
    case ENXIO:
    case ESTALE:
    case ENOTDIR:
    case ELOOP:  // a symlink where a directory of the mount point was
    case EROFS: return TrimStatus::Gone;
    case EINVAL: return range_start > 0 ? TrimStatus::PastEnd : TrimStatus::Error;
    default: return TrimStatus::Error;
  }
}

namespace {

// Whether `fd` is the mount `expected` describes; the RawTrim to report when not.
std::optional<RawTrim> wrong_mount(int fd, const MountIdentity& expected) noexcept {
  if (expected == MountIdentity{}) return std::nullopt;
  MountIdentity found;
  if (!read_mount_identity(fd, found)) return RawTrim{RawTrim::Stat, errno, 0, 0};
  const IdentityMismatch mismatch = compare_identity(expected, found);
  if (mismatch == IdentityMismatch::None) return std::nullopt;
  RawTrim raw{RawTrim::WrongMount, ESTALE, 0, found.device};
  if (mismatch == IdentityMismatch::Device) raw.step = RawTrim::WrongDevice;
  raw.mismatch = static_cast<std::int32_t>(mismatch);
  return raw;
}

const char* what_is_there(IdentityMismatch mismatch) {
  switch (mismatch) {
    case IdentityMismatch::MountId:
    case IdentityMismatch::UniqueId: return "another mount";
    case IdentityMismatch::FsType: return "another filesystem type";
    default: return "another filesystem";
  }
}

void warn_once_about_pinning(int error) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  spdlog::warn(
      "cannot make a detached copy of a mount to trim through ({}): umount of a "
      "filesystem fails with EBUSY while its chunk runs",
      describe(error));
}

}  // namespace

RawTrim fitrim_raw(const TrimTarget& target, const TrimRange& range) noexcept {
  RawTrim raw;
  // No path lookup after this one: everything below acts on this fd or on a
  // copy of its mount, whatever is mounted at the path meanwhile.
  UniqueFd fd(open_directory_nofollow(target.mount_point.c_str(), O_RDONLY));
  if (fd.get() < 0) return RawTrim{RawTrim::Open, errno, 0, 0};
  // After an unmount the mount point is a plain directory of the parent
  // filesystem; without this check we would trim the filesystem underneath.
  if (auto wrong = wrong_mount(fd.get(), target.identity)) return *wrong;
  UniqueFd copy(clone_mount(fd.get()));
  if (copy.get() >= 0)
    fd = std::move(copy);  // closes the original: it no longer pins the mount
  else
    raw.clone_error = errno;
  struct fstrim_range kernel_range {};
  kernel_range.start = range.start;
  kernel_range.len = range.len;
  kernel_range.minlen = range.minlen;
  if (::ioctl(fd.get(), FITRIM, &kernel_range) != 0) {
    raw.step = RawTrim::Ioctl;
    raw.error = errno;
    return raw;
  }
  raw.bytes = kernel_range.len;
  return raw;
}

TrimOutcome outcome_of(const RawTrim& raw, const TrimTarget& target, const TrimRange& range) {
  const std::string& where = target.mount_point;
  if (raw.clone_error != 0) warn_once_about_pinning(raw.clone_error);
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
                     where + " is no longer the filesystem on " +
                         device_name(target.identity.device) + " (now " +
                         device_name(static_cast<dev_t>(raw.seen_device)) + "): not trimming");
    case RawTrim::WrongMount:
      return failure(TrimStatus::Gone, ESTALE,
                     where + " is no longer the mount trimd found (now " +
                         what_is_there(static_cast<IdentityMismatch>(raw.mismatch)) +
                         "): not trimming");
    default: return syscall_failure("FITRIM on " + where + " failed", raw.error, range.start);
  }
}

TrimOutcome fitrim(const TrimTarget& target, const TrimRange& range) {
  return outcome_of(fitrim_raw(target, range), target, range);
}

}  // namespace trimd
