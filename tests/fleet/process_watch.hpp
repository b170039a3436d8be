// What a process costs while a test attacks it: its open files and its peak
// memory, sampled every 20 ms on a thread of the test's own until stopped.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "loop_probe.hpp"

namespace trimd::test {

class ProcessWatch {
 public:
  explicit ProcessWatch(pid_t pid)
      : pid_(std::to_string(pid)), thread_([this] {
          while (!stop_) {
            try {
              most_open_files_ = std::max<std::size_t>(most_open_files_, open_files(pid_));
            } catch (const std::exception&) {  // gone: nothing more to count
            }
            std::this_thread::sleep_for(std::chrono::milliseconds{20});
          }
        }) {}
  ~ProcessWatch() { stop(); }
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::size_t most_open_files() const { return most_open_files_; }
  std::size_t peak_rss_bytes() const { return trimd::test::peak_rss_bytes(pid_); }

 private:
  std::string pid_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> most_open_files_{0};
  std::thread thread_;
};

}  // namespace trimd::test
