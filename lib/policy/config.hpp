// The TOML policy (toml++), with compiled-in defaults so trimd runs with no
// file at all. Errors name file, line and column.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fleet_config.hpp"
#include "idleness.hpp"
#include "policy_files.hpp"
#include "schedule.hpp"
#include "time.hpp"
#include "units.hpp"

namespace trimd {

// What trimd does about a filesystem mounted with synchronous `discard`
// (lib/policy/takeover.hpp): say so, turn it off and trim instead, or stay quiet.
enum class InlineDiscardPolicy { Warn, Takeover, Ignore };
const char* to_string(InlineDiscardPolicy policy);  // "warn", "takeover", "ignore"

// What a pass does while the machine runs on battery (daemon/power_watch.hpp
// says when it does): wait for AC, trim gently (gentle_chunk_size,
// gentle_pause), or trim as on AC. A pass asked for (TrimNow) always runs.
enum class OnBatteryPolicy { Wait, Gentle, Trim };
const char* to_string(OnBatteryPolicy policy);  // "wait", "gentle", "trim"

// How one filesystem is trimmed. Every field can be overridden per filesystem.
struct TrimPolicy {
  bool enabled = true;
  SchedulePolicy schedule;
  std::uint64_t chunk_bytes = 1ull << 30;  // range per FITRIM call
  std::uint64_t min_extent_bytes = 0;      // FITRIM minlen (0 = device granularity)
  // Chunks are sized from the range per second the last calls achieved so
  // that one takes about this long (never less than an ext4 block group or a
  // btrfs block group). Foreground I/O does not wait for a call (it is
  // preempted); this bounds the work a preempted call loses. 0 = always
  // chunk_bytes.
  Duration chunk_time = std::chrono::seconds{2};
  Duration chunk_pause = std::chrono::milliseconds{20};  // between chunks
  std::uint64_t rate_limit_bytes_per_sec = 0;            // of range; 0 = unlimited
  // The share of wall time the passes may keep the filesystem's disks busy
  // with discards (0 = no budget): after a chunk that kept them busy for t,
  // the next waits t x (1/duty - 1) (lib/policy/duty.hpp).
  double duty = 0;
  // Overdue filesystems whose disks never go idle are trimmed "gently".
  std::uint64_t gentle_chunk_bytes = 64ull << 20;
  Duration gentle_pause = std::chrono::seconds{5};
  // Rotational devices that support discard are mostly thin-provisioned or
  // virtual, where TRIM is what gives space back: don't skip them by default.
  bool skip_rotational = false;
  InlineDiscardPolicy inline_discard = InlineDiscardPolicy::Warn;
  // Laptops: no trimming on battery by default, as Android's idle
  // maintenance and Windows' drive optimisation do.
  OnBatteryPolicy on_battery = OnBatteryPolicy::Wait;
  // [trim] only: on a clean stop, give back `discard` to the filesystems
  // trimd took over, so none is left with neither inline discard nor trimd.
  bool hand_back_on_stop = true;
  // [trim] only: the state file forgets a filesystem not mounted for this
  // long, so that it stays small on hosts where filesystems come and go.
  Duration forget_after = std::chrono::hours{24 * 90};
  // [trim] scope: "mounted" trims every eligible mounted filesystem; "fstab"
  // only those /etc/fstab lists (as fstrim.service does). [trim] only.
  enum class Scope { Mounted, Fstab };
  Scope scope = Scope::Mounted;
  // The shared storage backend whose fleet-wide cap on passes this
  // filesystem's passes count against ([fleet], docs/fleet.md); empty = none.
  std::string backend;

  bool operator==(const TrimPolicy&) const = default;
};

// A change that a [trim] key or a [[filesystem]] rule makes to the policy of
// the filesystems it applies to.
using PolicyChange = std::function<void(TrimPolicy&)>;

// A [[filesystem]] table: which filesystems it applies to, and what it sets.
// Every match field that is given must match; later overrides win.
struct PolicyOverride {
  std::optional<std::string> mount_point_glob;  // fnmatch(3) pattern
  std::optional<std::string> uuid;
  std::optional<std::string> fs_type;
  // What the rule sets, in the order written: each key's change, made by the
  // key's descriptor (config_keys.cpp), so no key can be read but not applied.
  std::vector<PolicyChange> changes;

  bool matches(std::string_view mount_point, std::string_view uuid, std::string_view fs_type) const;
  void apply_to(TrimPolicy& policy) const;
};

struct Config {
  Duration sample_interval = std::chrono::seconds{1};
  // While a chunk is in the kernel, its disks are sampled this often and the
  // chunk is killed when foreground I/O arrives. 0 = never preempt.
  Duration preempt_interval = std::chrono::milliseconds{20};
  // How much foreground I/O a chunk tolerates before it is killed: none
  // (0), or I/O whose mean latency over a sample stays below this. Unset
  // ("auto"): kQueuedPreemptLatency on disks that queue their discards,
  // none elsewhere (docs/preemption.md, "Queued TRIM").
  std::optional<Duration> preempt_latency;
  IdleThresholds idle;
  TrimPolicy trim;
  std::vector<PolicyOverride> overrides;
  std::string log_level = "info";
  // [metrics] textfile: a Prometheus text file for node_exporter's textfile
  // collector, rewritten atomically; empty = none.
  std::string metrics_textfile;
  // [fleet]: nothing = no coordination, no socket.
  std::optional<FleetConfig> fleet;

  TrimPolicy policy_for(std::string_view mount_point, std::string_view uuid,
                        std::string_view fs_type) const;
};

class ConfigError : public std::runtime_error {
 public:
  // what() is "file:line:column: message"; line/column are 0 when unknown
  // (e.g. the file cannot be read), and what() is then "file: message".
  ConfigError(std::string file, int line, int column, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string message_;
};

// Throws ConfigError. Unknown keys and bad values are errors.
Config parse_config(std::string_view text, const std::string& file_name);
// One file, without drop-ins. Missing file: defaults when `missing_ok`, else
// ConfigError. Throws ConfigError.
Config load_config(const std::string& path, bool missing_ok);
// The policy trimd runs with: the main file, then each drop-in in merge order
// (list_drop_ins), a later file changing what earlier ones set key by key and
// adding its [[filesystem]] rules after theirs. The files together hold at
// most kMaxPolicyFileBytes. An error names the file it is in. `files_read`,
// when given, gets the files read, in order. Throws ConfigError.
Config load_policy(const PolicySources& sources, std::vector<std::string>* files_read = nullptr);
// The text of one policy file (at most kMaxPolicyFileBytes, a link to one
// followed), or nothing when it does not exist. Throws ConfigError.
std::optional<std::string> read_policy_file(const std::string& path);

}  // namespace trimd
