#include "status_line.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace trimd {

namespace {

struct CoarseUnit {
  const char* name;
  std::int64_t usec;
};

constexpr std::int64_t kUsecPerSecond = 1'000'000;
constexpr std::array<CoarseUnit, 4> kCoarseUnits{{
    {"d", 86'400 * kUsecPerSecond},
    {"h", 3'600 * kUsecPerSecond},
    {"min", 60 * kUsecPerSecond},
    {"s", kUsecPerSecond},
}};

std::string percent(double progress) {
  const double clamped = std::clamp(progress, 0.0, 1.0);
  return std::to_string(static_cast<int>(std::floor(clamped * 100))) + "%";
}

std::size_t count_in(const std::vector<FsStatus>& filesystems, FsState state) {
  return static_cast<std::size_t>(
      std::count_if(filesystems.begin(), filesystems.end(),
                    [state](const FsStatus& fs) { return fs.state == state; }));
}

// The filesystems trimming now, each with its progress.
std::vector<std::string> running_parts(const std::vector<FsStatus>& filesystems) {
  std::vector<std::string> parts;
  for (const auto& fs : filesystems)
    if (fs.state == FsState::Trimming)
      parts.push_back("trimming " + fs.mount_point + " " + percent(fs.progress));
  return parts;
}

// Counts of the states that hold a pass back or need the admin.
std::vector<std::string> waiting_parts(const std::vector<FsStatus>& filesystems) {
  std::vector<std::string> parts;
  if (auto n = count_in(filesystems, FsState::Waiting))
    parts.push_back(std::to_string(n) + " waiting for idle disks");
  if (auto n = count_in(filesystems, FsState::Paused))
    parts.push_back(std::to_string(n) + " paused");
  if (auto n = count_in(filesystems, FsState::Error))
    parts.push_back(std::to_string(n) + " failed");
  return parts;
}

// The scheduled filesystem due first, if any.
const FsStatus* next_due(const std::vector<FsStatus>& filesystems) {
  const FsStatus* next = nullptr;
  for (const auto& fs : filesystems)
    if (fs.state == FsState::Scheduled && fs.next_trim &&
        (!next || *fs.next_trim < *next->next_trim))
      next = &fs;
  return next;
}

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

}  // namespace

std::string coarse_duration(Duration d) {
  const std::int64_t usec = std::max<std::int64_t>(d.count(), 0);
  for (const auto& unit : kCoarseUnits)
    if (usec >= unit.usec) return std::to_string(usec / unit.usec) + unit.name;
  return "0s";
}

std::string status_line(const std::vector<FsStatus>& filesystems, TimePoint now) {
  auto parts = running_parts(filesystems);
  const auto waiting = waiting_parts(filesystems);
  parts.insert(parts.end(), waiting.begin(), waiting.end());
  std::string line = parts.empty() ? "idle" : join(parts, ", ");
  if (const FsStatus* next = next_due(filesystems)) {
    line += "; next: " + next->mount_point;
    const auto wait = std::chrono::duration_cast<Duration>(*next->next_trim - now);
    line += wait.count() <= 0 ? " now" : " in " + coarse_duration(wait);
  }
  return line;
}

}  // namespace trimd
