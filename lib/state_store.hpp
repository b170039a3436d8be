// Per-filesystem state that survives restarts and reboots: the last pass and
// the cursor of an unfinished one. Written atomically (temp file, fsync,
// rename, fsync of the directory).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "time.hpp"

namespace trimd {

struct FsRecord {
  std::optional<TimePoint> last_start;
  std::optional<TimePoint> last_end;
  std::string last_result;  // "success", "failed: ...", "cancelled", "" = never
  std::uint64_t last_bytes = 0;  // bytes discarded by the last complete pass
  // An unfinished pass: where to go on, when it started, what it did so far.
  std::optional<std::uint64_t> cursor;
  std::optional<TimePoint> pass_start;
  std::uint64_t pass_bytes = 0;
  std::string mount_point;  // for people reading the file
};

using StateMap = std::map<std::string, FsRecord>;  // key: filesystem id

class StateStore {
 public:
  explicit StateStore(std::filesystem::path directory);
  const std::filesystem::path& path() const { return file_; }  // <dir>/state.toml

  // A missing file is an empty state. A corrupt or unreadable one is logged,
  // moved aside to state.toml.corrupt-<time>, and an empty state returned:
  // never throws for bad content.
  StateMap load();
  // Atomic; creates the directory. Throws std::system_error on I/O failure.
  void save(const StateMap& state) const;

 private:
  std::filesystem::path directory_;
  std::filesystem::path file_;
};

}  // namespace trimd
