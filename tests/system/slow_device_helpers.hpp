// What the tests on the slow-TRIM device (bench/slowtrim) share: the image
// that makes a FITRIM take seconds, a foreground writer, and waiting for
// one of trimd's runners to be inside FITRIM.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "proc_probe.hpp"
#include "wait_until.hpp"

namespace trimd::test {

// 8000 files of 8 KiB, every other one deleted: 4000 free extents, about
// 8 s of discards in one call at 2 ms each.
inline constexpr std::size_t kSlowFiles = 8000;
inline constexpr std::uint64_t kSlowFileBytes = 8 * 1024;
inline constexpr std::uint64_t kSlowImageMib = 512;

// The first runner of `trimd` seen inside a FITRIM that `wanted` accepts,
// within `timeout`.
template <typename Wanted>
std::optional<std::pair<pid_t, FitrimCall>> runner_in_fitrim(pid_t trimd, Wanted wanted,
                                                             std::chrono::milliseconds timeout) {
  std::optional<std::pair<pid_t, FitrimCall>> found;
  wait_until(
      [&] {
        for (pid_t child : children_of(trimd))
          if (auto call = fitrim_in_flight(child); call && wanted(*call)) {
            found.emplace(child, *call);
            return true;
          }
        return false;
      },
      timeout, std::chrono::milliseconds{2});
  return found;
}

// 4 KiB + fdatasync in a loop on a thread: foreground writes that reach the
// disk at once, until stopped or destroyed.
class ForegroundWriter {
 public:
  explicit ForegroundWriter(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)),
        thread_([this] { run(); }) {}
  ~ForegroundWriter() { stop(); }
  ForegroundWriter(const ForegroundWriter&) = delete;
  ForegroundWriter& operator=(const ForegroundWriter&) = delete;

  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  std::uint64_t writes() const { return writes_; }

 private:
  void run() {
    std::vector<char> block(4096, 'w');
    for (std::uint64_t n = 0; !stop_ && fd_ >= 0; ++n) {
      const auto offset = static_cast<off_t>((n % 256) * block.size());
      if (::pwrite(fd_, block.data(), block.size(), offset) < 0 || ::fdatasync(fd_) != 0) return;
      ++writes_;
    }
  }

  int fd_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> writes_{0};
  std::thread thread_;
};

}  // namespace trimd::test
