#include "atomic_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "unique_fd.hpp"

namespace trimd {
namespace {

namespace fs = std::filesystem;

// Names tried before giving up when each is taken (by chance or by someone
// who guesses faster than 2^64).
constexpr int kNameAttempts = 16;

[[noreturn]] void throw_errno(int error, const std::string& what) {
  throw std::system_error(error, std::generic_category(), what);
}

// 64 random bits. GRND_NONBLOCK: early in boot the pool may not be ready,
// and a name only needs to be hard to guess, not a key.
std::uint64_t random_bits() {
  std::uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof bits))
    return bits;
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  const auto mixed = static_cast<std::uint64_t>(now) * 0x9e3779b97f4a7c15ULL;
  return mixed ^ static_cast<std::uint64_t>(::getpid());
}

// ".trimd.prom.<16 hex>.tmp": hidden, and not "*.prom" for a collector.
std::string temp_name(const fs::path& file) {
  return fmt::format(".{}.{:016x}.tmp", file.filename().string(), random_bits());
}

// The new content, not yet in place: unnamed (O_TMPFILE) until linked in.
struct TempFile {
  UniqueFd fd;
  std::string name;  // empty while unnamed
};

// O_EXCL|O_NOFOLLOW: whatever is already at a name is never opened, so a
// FIFO cannot block and a link cannot redirect the write.
TempFile create_named(int dir, const fs::path& file, mode_t mode) {
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    std::string name = temp_name(file);
    UniqueFd fd{::openat(dir, name.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)};
    if (fd.get() >= 0) return TempFile{std::move(fd), std::move(name)};
    if (errno != EEXIST) throw_errno(errno, "cannot create a file beside " + file.string());
  }
  throw_errno(EEXIST, "cannot create a file beside " + file.string());
}

TempFile create_temp(int dir, const fs::path& file, mode_t mode, TempFileKind kind) {
  if (kind == TempFileKind::Named) return create_named(dir, file, mode);
  UniqueFd fd{::openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode)};
  if (fd.get() >= 0) return TempFile{std::move(fd), {}};
  // Filesystems (and kernels) without O_TMPFILE answer one of these.
  if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
    return create_named(dir, file, mode);
  throw_errno(errno, "cannot create a file beside " + file.string());
}

// Returns 0 or the errno of the failed write.
int write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; the /proc link works
// for anyone (open(2) documents both for O_TMPFILE).
int link_unnamed(int fd, int dir, const std::string& name) {
  if (::linkat(fd, "", dir, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  if (errno == EEXIST) return errno;
  const std::string proc = fmt::format("/proc/self/fd/{}", fd);
  if (::linkat(AT_FDCWD, proc.c_str(), dir, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  return errno;
}

void give_name(TempFile& temp, int dir, const fs::path& file) {
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    std::string name = temp_name(file);
    const int error = link_unnamed(temp.fd.get(), dir, name);
    if (error == 0) {
      temp.name = std::move(name);
      return;
    }
    if (error != EEXIST) throw_errno(error, "cannot link a new " + file.string());
  }
  throw_errno(EEXIST, "cannot link a new " + file.string());
}

void fill(const TempFile& temp, std::string_view text, mode_t mode, const fs::path& file) {
  if (::fchmod(temp.fd.get(), mode) < 0)
    throw_errno(errno, "cannot set the mode of " + file.string());
  if (const int error = write_all(temp.fd.get(), text))
    throw_errno(error, "cannot write " + file.string());
  if (::fsync(temp.fd.get()) < 0) throw_errno(errno, "cannot sync " + file.string());
}

}  // namespace

void replace_file_atomically(const fs::path& file, std::string_view text, mode_t mode,
                             TempFileKind kind) {
  const fs::path directory = file.has_parent_path() ? file.parent_path() : fs::path(".");
  // O_DIRECTORY refuses anything else before it could block on opening it.
  UniqueFd dir{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)};
  if (dir.get() < 0) throw_errno(errno, "cannot open " + directory.string());
  TempFile temp = create_temp(dir.get(), file, mode, kind);
  try {
    fill(temp, text, mode, file);
    if (temp.name.empty()) give_name(temp, dir.get(), file);
    // close() can report a failed write-back.
    if (::close(temp.fd.release()) < 0) throw_errno(errno, "cannot write " + file.string());
    if (::renameat(dir.get(), temp.name.c_str(), dir.get(), file.filename().c_str()) < 0)
      throw_errno(errno, "cannot replace " + file.string());
  } catch (...) {
    if (!temp.name.empty()) ::unlinkat(dir.get(), temp.name.c_str(), 0);
    throw;
  }
  if (::fsync(dir.get()) < 0) throw_errno(errno, "cannot sync " + directory.string());
}

}  // namespace trimd
