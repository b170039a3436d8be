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

// Why trimd turned a filesystem's inline discard off: its policy said
// inline_discard = "takeover", or someone asked (TakeOver on the bus).
enum class TakeoverOrigin { Policy, Request };
const char* to_string(TakeoverOrigin origin);  // "policy", "request"

struct TakeoverRecord {
  TimePoint since{};
  TakeoverOrigin origin = TakeoverOrigin::Policy;
  bool operator==(const TakeoverRecord&) const = default;
};

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
  // trimd took the filesystem's `discard` away and owes it back (trimd(8)).
  std::optional<TakeoverRecord> taken_over;
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
