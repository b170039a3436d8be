#include "trim_workers.hpp"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <system_error>

#include "diskstats.hpp"

namespace trimd {

std::optional<std::uint64_t> discarded_bytes(const std::vector<std::string>& disks) {
  std::ifstream in("/proc/diskstats");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const auto stats = parse_diskstats(text.str());
  std::uint64_t sectors = 0;
  for (const auto& disk : disks) {
    bool found = false;
    for (const auto& stat : stats) {
      if (stat.name != disk) continue;
      sectors += stat.counters.sectors_discarded;
      found = true;
      break;
    }
    if (!found) return std::nullopt;
  }
  return sectors * kDiskstatsSectorBytes;
}

TrimWorkers::TrimWorkers(EventLoop& loop, Trimmer& trimmer, OnDone on_done)
    : loop_(loop), trimmer_(trimmer), on_done_(std::move(on_done)),
      event_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (event_fd_.get() < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  loop_.add(event_fd_.get(), EPOLLIN, [this](std::uint32_t) { collect(); });
}

TrimWorkers::~TrimWorkers() {
  loop_.remove(event_fd_.get());
  for (auto& [serial, thread] : threads_) {
    // A thread still inside FITRIM cannot be interrupted; the process is
    // exiting, and the kernel finishes the call on its own.
    if (thread.joinable()) thread.detach();
  }
}

void TrimWorkers::start(ChunkJob job) {
  const std::uint64_t serial = job.serial;
  threads_.emplace(serial, std::thread([this, job = std::move(job)]() mutable {
    run_chunk(std::move(job));
  }));
}

void TrimWorkers::run_chunk(ChunkJob job) {
  const auto before = discarded_bytes(job.disks);
  const auto started = std::chrono::steady_clock::now();
  ChunkResult result;
  result.outcome = trimmer_.trim(job.target, job.range);
  result.elapsed =
      std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - started);
  const auto after = discarded_bytes(job.disks);
  if (before && after && *after >= *before) result.bytes_discarded = *after - *before;
  {
    std::lock_guard lock(mutex_);
    finished_.push_back({std::move(job), std::move(result)});
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(event_fd_.get(), &one, sizeof one);
}

void TrimWorkers::collect() {
  std::uint64_t count;
  [[maybe_unused]] auto n = ::read(event_fd_.get(), &count, sizeof count);
  std::vector<Finished> done;
  {
    std::lock_guard lock(mutex_);
    done.swap(finished_);
  }
  for (auto& item : done) {
    auto it = threads_.find(item.job.serial);
    if (it != threads_.end()) {
      it->second.join();
      threads_.erase(it);
    }
    on_done_(item.job, item.result);
  }
}

bool TrimWorkers::drain(Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!threads_.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{event_fd_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) > 0) collect();
  }
  return true;
}

}  // namespace trimd
