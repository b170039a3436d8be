// Reconfiguring one superblock parameter with fspick(2) and fsconfig(2).
//
// The superblock is shared by every mount of the filesystem in every mount
// namespace, so the change is seen by the whole system even from trimd's
// private namespace (ProtectSystem=strict). Per-mount flags (the "ro" that
// ProtectSystem puts on every mount trimd sees) are not touched: a classic
// `mount -o remount,nodiscard` from there would carry that "ro" along and
// make the filesystem read-only for everyone (measured; docs/takeover.md).
#include "remounter.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "mountinfo.hpp"
#include "unique_fd.hpp"

namespace trimd {

namespace {

RemountOutcome failed(const std::string& message) { return {RemountResult::Failed, message}; }

std::string errno_text(const char* call, int error) {
  return std::string(call) + ": " + std::strerror(error);
}

// The kernel's own words about a failed fsconfig(2), queued on the context fd
// ("e ext4: ..."); empty when it said nothing.
std::string context_log(int fd) {
  std::string log;
  char buffer[512];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
    if (n <= 0) break;
    if (!log.empty()) log += "; ";
    log.append(buffer, static_cast<std::size_t>(n));
  }
  return log;
}

std::string fsconfig_failure(int fd, const char* what, int error) {
  std::string message = errno_text(what, error);
  const std::string log = context_log(fd);
  if (!log.empty()) message += " (" + log + ")";
  return message;
}

// The mount point opened as a path, checked to still be the filesystem the
// caller means: something mounted over it since would be a different one.
UniqueFd open_target(const RemountTarget& target, std::string& error) {
  UniqueFd fd(::open(target.mount_point.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    error = errno_text("open", errno);
    return fd;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) {
    error = errno_text("fstat", errno);
    return UniqueFd();
  }
  if (target.device != 0 && st.st_dev != target.device) {
    error = "another filesystem is now mounted there";
    return UniqueFd();
  }
  return fd;
}

std::optional<DiscardMode> mode_now(const std::string& mount_point) {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  std::optional<DiscardMode> mode;
  // The last entry for the path is the one on top, which fspick picked.
  for (const auto& entry : parse_mountinfo(text.str()))
    if (entry.mount_point == mount_point) mode = discard_mode(entry);
  return mode;
}

}  // namespace

DiscardMode discard_mode_after(bool discard) {
  return discard ? DiscardMode::Sync : DiscardMode::None;
}

RemountOutcome FsconfigRemounter::set_discard(const RemountTarget& target, bool discard) {
  std::string error;
  const UniqueFd path = open_target(target, error);
  if (path.get() < 0) return failed(target.mount_point + ": " + error);
  const UniqueFd context(::fspick(path.get(), "", FSPICK_CLOEXEC | FSPICK_EMPTY_PATH));
  if (context.get() < 0) return failed(errno_text("fspick", errno));
  const char* option = discard ? "discard" : "nodiscard";
  if (::fsconfig(context.get(), FSCONFIG_SET_FLAG, option, nullptr, 0) < 0)
    return failed(fsconfig_failure(context.get(), option, errno));
  if (::fsconfig(context.get(), FSCONFIG_CMD_RECONFIGURE, nullptr, nullptr, 0) < 0)
    return failed(fsconfig_failure(context.get(), "reconfigure", errno));
  const auto mode = mode_now(target.mount_point);
  if (!mode) return failed("no longer in /proc/self/mountinfo");
  if (*mode != discard_mode_after(discard))
    return {RemountResult::Ignored, std::string("the kernel accepted '") + option +
                                        "' but kept the filesystem's discard option"};
  return {};
}

}  // namespace trimd
