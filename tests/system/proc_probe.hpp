// What /proc says about trimd and its FITRIM runners: children, open file
// descriptors, and the range of a FITRIM a process is inside right now.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace trimd::test {

std::vector<pid_t> children_of(pid_t pid);  // /proc/PID/task/PID/children
std::size_t open_fds(pid_t pid);            // entries of /proc/PID/fd

struct FitrimCall {
  std::uint64_t start = 0;
  std::uint64_t len = 0;
};
// The struct fstrim_range of the ioctl(FITRIM) `pid` is blocked in, read
// from its memory (/proc/PID/syscall, /proc/PID/mem; needs root); nothing
// when it is not inside FITRIM, and also while it is on a CPU (the kernel
// then says "running"): poll, do not ask once.
std::optional<FitrimCall> fitrim_in_flight(pid_t pid);

bool process_exists(pid_t pid);  // and is not a zombie

}  // namespace trimd::test
