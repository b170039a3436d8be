// A failed system call as the exception the daemon's setup code throws.
#pragma once

#include <cerrno>
#include <system_error>

namespace trimd {

[[noreturn]] inline void throw_errno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace trimd
