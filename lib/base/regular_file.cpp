#include "regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "unique_fd.hpp"
#include "units.hpp"

namespace trimd {
namespace {

std::string_view kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

FileRefused refused(int error) { return FileRefused(std::strerror(error)); }

struct OpenFile {
  UniqueFd fd;
  struct stat st {};
};

// `path` open for reading, if it exists and is a regular file.
std::optional<OpenFile> open_regular_file(const std::string& path, Links links) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  const int no_follow = links == Links::Refuse ? O_NOFOLLOW : 0;
  OpenFile file{UniqueFd{::open(path.c_str(), O_RDONLY | O_NONBLOCK | no_follow | O_CLOEXEC)}};
  const int fd = file.fd.get();
  if (fd < 0 && errno == ENOENT) return std::nullopt;
  if (fd < 0 && errno == ELOOP && links == Links::Refuse)
    throw FileRefused("is a symbolic link, which trimd does not follow");
  if (fd < 0) throw refused(errno);
  if (::fstat(fd, &file.st) < 0) throw refused(errno);
  if (S_ISDIR(file.st.st_mode)) throw refused(EISDIR);
  if (!S_ISREG(file.st.st_mode))
    throw FileRefused(fmt::format("is {}, not a regular file", kind_of(file.st.st_mode)));
  return file;
}

}  // namespace

std::optional<struct stat> stat_regular_file(const std::string& path, Links links) {
  const auto file = open_regular_file(path, links);
  if (!file) return std::nullopt;
  return file->st;
}

std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes,
                                             Links links) {
  const auto file = open_regular_file(path, links);
  if (!file) return std::nullopt;
  const int fd = file->fd.get();
  const struct stat& st = file->st;
  const auto too_large = [&] {
    return FileRefused(
        fmt::format("is larger than {}, the most trimd reads", format_size(max_bytes)));
  };
  if (static_cast<std::size_t>(st.st_size) > max_bytes) throw too_large();
  std::string text;
  std::array<char, 16384> buffer{};
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw refused(errno);
    if (n == 0) return text;
    text.append(buffer.data(), static_cast<std::size_t>(n));
    // It may have grown since fstat().
    if (text.size() > max_bytes) throw too_large();
  }
}

}  // namespace trimd
