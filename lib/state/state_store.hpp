// Per-filesystem state that survives restarts and reboots: the last pass and
// the cursor of an unfinished one. Written atomically (replace_file_atomically)
// and never larger than trimd reads back.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mount_instance.hpp"
#include "pass_outcome.hpp"
#include "time.hpp"

namespace trimd {

// Why trimd turned a filesystem's inline discard off: its policy said
// inline_discard = "takeover", or someone asked (TakeOver on the bus).
enum class TakeoverOrigin { Policy, Request };
const char* to_string(TakeoverOrigin origin);  // "policy", "request"

struct TakeoverRecord {
  TimePoint since{};
  TakeoverOrigin origin = TakeoverOrigin::Policy;
  // The mount trimd took `discard` from: only that one gets it back. None
  // in a record written before trimd kept it.
  std::optional<MountInstance> mount = std::nullopt;
  bool operator==(const TakeoverRecord&) const = default;
};

// One finished pass, for `trimctl history`.
struct PassHistoryEntry {
  TimePoint start{};
  TimePoint end{};
  Duration trimming{0};  // wall time minus the waits
  Duration waited{0};    // for idle disks, the window, a shared disk, a pause
  std::uint64_t bytes = 0;
  PassOutcome result;
  std::uint64_t preemptions = 0;

  bool operator==(const PassHistoryEntry&) const = default;
};

// How many finished passes each record keeps (oldest dropped first).
inline constexpr std::size_t kHistoryLength = 10;

// The largest lifetime figure: a TOML integer is signed, and a figure must
// read back after a restart as it was. Figures stop there instead of wrapping.
inline constexpr std::uint64_t kMaxLifetimeCount = std::numeric_limits<std::int64_t>::max();

// a + b, at most kMaxLifetimeCount.
std::uint64_t add_saturating(std::uint64_t a, std::uint64_t b);

// What trimd did to one filesystem over its lifetime (all passes it
// remembers, across restarts).
struct Lifetime {
  std::uint64_t bytes = 0;
  std::uint64_t passes = 0;
  std::uint64_t preemptions = 0;  // chunks killed for foreground I/O
  std::uint64_t pauses = 0;       // stops between chunks for foreground I/O
  std::uint64_t failures = 0;     // passes that ended PassResult::Failed

  Lifetime& operator+=(const Lifetime& other);  // each figure with add_saturating
  bool operator==(const Lifetime&) const = default;
};

struct FsRecord {
  std::optional<TimePoint> last_start;
  std::optional<TimePoint> last_end;
  std::optional<PassOutcome> last_result;  // none = never trimmed
  std::uint64_t last_bytes = 0;            // bytes discarded by the last complete pass
  // An unfinished pass: where to go on, when it started, what it did so far.
  std::optional<std::uint64_t> cursor;
  std::optional<TimePoint> pass_start;
  std::uint64_t pass_bytes = 0;
  Duration pass_waited{0};  // what the unfinished pass has waited so far
  std::string mount_point;  // for people reading the file
  std::string device;       // where it was last mounted from: tells clones apart
  // The last complete pass split into trimming and waiting.
  Duration last_trimming{0};
  Duration last_waited{0};
  Lifetime lifetime;
  std::vector<PassHistoryEntry> history;  // oldest first, at most kHistoryLength
  // When trimd first found it: its first pass is due first_delay after this,
  // however often trimd restarts meanwhile.
  std::optional<TimePoint> first_seen;
  // When trimd last found this filesystem mounted (absent in older files).
  std::optional<TimePoint> last_seen;
  // trimd took the filesystem's `discard` away and owes it back (trimd(8)).
  std::optional<TakeoverRecord> taken_over;

  bool operator==(const FsRecord&) const = default;
};

// Appends `entry`, dropping the oldest beyond kHistoryLength.
void add_history(FsRecord& record, PassHistoryEntry entry);

using StateMap = std::map<std::string, FsRecord>;  // key: filesystem id

// The text of a state file; throws std::runtime_error when it is corrupt
// (bad TOML, a value of the wrong type or out of range). `file` names it.
StateMap parse_state(std::string_view text, const std::filesystem::path& file);

// When the filesystem was last seen mounted (in an older file: its last pass).
std::optional<TimePoint> last_sighting(const FsRecord& record);

// Drops from `state` every record whose last sighting (or, in an older file,
// last pass) is more than `keep` (the policy's forget_after) before `now`:
// images mounted once, disks long gone. A record with neither stays.
// Returns how many went.
std::size_t prune_unseen(StateMap& state, TimePoint now, Duration keep);

// The most trimd reads of a state file, and so the most it writes: 2050
// filesystems with 4095-byte mount points and full histories fit.
inline constexpr std::size_t kMaxStateFileBytes = 16u << 20;
// The most filesystems a state file remembers.
inline constexpr std::size_t kMaxStateRecords = 4096;

// What save() may write. Tests make them small.
struct StateBounds {
  std::size_t max_bytes = kMaxStateFileBytes;
  std::size_t max_records = kMaxStateRecords;
};

class StateStore {
 public:
  explicit StateStore(std::filesystem::path directory, StateBounds bounds = {});
  const std::filesystem::path& path() const { return file_; }  // <dir>/state.toml

  enum class OnCorrupt { MoveAside, Leave };
  // A missing file is an empty state. A corrupt or unreadable one (not a
  // regular file, over kMaxStateFileBytes, a value out of range) is logged,
  // moved aside to state.toml.corrupt-<time> unless `Leave` (--dry-run
  // changes nothing on disk), and an empty state returned: never throws for
  // bad content.
  StateMap load(OnCorrupt on_corrupt = OnCorrupt::MoveAside);
  // Atomic; creates the directory. Throws std::system_error on I/O failure.
  // When the records do not all fit the bounds, the least recently seen are
  // left out (a warning says how many, once per change of that number).
  // Returns how many were left out.
  std::size_t save(const StateMap& state);

 private:
  std::filesystem::path directory_;
  std::filesystem::path file_;
  StateBounds bounds_;
  std::size_t left_out_ = 0;  // by the last save, to warn once
};

}  // namespace trimd
