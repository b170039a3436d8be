// Small POSIX helpers shared by the test kits.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace trimd::test {

[[noreturn]] inline void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

inline void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace trimd::test
