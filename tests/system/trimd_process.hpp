// The real trimd under test: a child process with its log captured to a file,
// plus what the system tests read back (its log, its state file, the loop
// device's discard counters). Nothing here outlives a test: the sandbox
// removes its directory, a TrimdProcess kills and reaps its child.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "log_event.hpp"
#include "loopfs.hpp"
#include "trimd_log.hpp"

namespace trimd::test {

// A private directory for one test's trimd: its config, state dir and logs.
class TrimdSandbox {
 public:
  TrimdSandbox();  // a fresh /tmp/trimd-systest-XXXXXX
  ~TrimdSandbox();
  TrimdSandbox(const TrimdSandbox&) = delete;
  TrimdSandbox& operator=(const TrimdSandbox&) = delete;

  std::string config_path() const { return dir_ + "/trimd.toml"; }
  std::string state_dir() const { return dir_ + "/state"; }
  std::string state_file() const { return state_dir() + "/state.toml"; }
  std::string log_path(const std::string& name) const { return dir_ + "/" + name + ".log"; }

  // Replaces the config atomically, so that a reload never reads half of it.
  void write_config(const std::string& toml) const;

  // --config, --state-dir, --no-bus, --log-level debug and --log-format
  // json, after `first`.
  std::vector<std::string> args(std::vector<std::string> first = {}) const;
  // The same, serving the bus at `bus_address` instead of --no-bus.
  std::vector<std::string> args_on_bus(const std::string& bus_address) const;

 private:
  std::string dir_;
};

// trimd (the binary the build made) as a child process; stdout and stderr go
// to `log_path`. The child gets SIGKILL when the test process dies.
class TrimdProcess {
 public:
  TrimdProcess(const std::vector<std::string>& args, std::string log_path);
  // The same, run by `wrapper` (a command that execs the rest, e.g.
  // {"nsenter", "--net=/run/netns/x", "--"}: the pid is still trimd's).
  TrimdProcess(const std::vector<std::string>& wrapper, const std::vector<std::string>& args,
               std::string log_path);
  // SIGKILL and reap when still running; never throws. With the environment
  // variable TRIMD_SYSTEST_SHOW_LOGS set, the log goes to stderr first.
  ~TrimdProcess();
  TrimdProcess(const TrimdProcess&) = delete;
  TrimdProcess& operator=(const TrimdProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::chrono::steady_clock::duration age() const;  // since it was started

  void send(int signal_number) const;
  bool running();  // false once it has exited (and then it is reaped)
  // The exit code (128 + signal when killed), or nothing when it outlives `timeout`.
  std::optional<int> wait_for_exit(std::chrono::milliseconds timeout);

  // The log for people, for failure messages (see readable_log()).
  std::string log() const;
  // The log entries of kind `id` (about `mount_point` when given), in order.
  std::vector<LogEntry> events(EventId id, const std::string& mount_point = {}) const;
  // The `nth` such entry (1-based), once it is there; nothing when `timeout`
  // passes or trimd exits without writing it.
  std::optional<LogEntry> wait_for_event(EventId id, const std::string& mount_point,
                                         std::chrono::milliseconds timeout, std::size_t nth = 1);

 private:
  std::string raw_log() const;

  std::string log_path_;
  std::chrono::steady_clock::time_point started_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// ---- reading trimd's log ----------------------------------------------------

struct ChunkLine {
  unsigned number = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};
// The chunks trimd started on `mount_point` (ChunkStarted), in order.
std::vector<ChunkLine> chunk_lines(const TrimdProcess& trimd, const std::string& mount_point);

struct PassSummary {
  std::uint64_t duration_usec = 0;  // time trimming, waits left out
  unsigned chunks = 0;
  unsigned foreground_pauses = 0;
};
// The last pass over `mount_point` that ended in success (PassFinished).
std::optional<PassSummary> pass_success(const TrimdProcess& trimd, const std::string& mount_point);

// ---- what the kernel and the state file say ------------------------------------

struct DiscardCounters {
  std::uint64_t completed = 0;  // /proc/diskstats field 15
  std::uint64_t sectors = 0;    // field 17, 512-byte sectors
};
DiscardCounters discard_counters(const std::string& disk_name);  // "loop3"

// The `cursor` of the state file's record for `mount_point`, read with toml++
// rather than trimd's own store; nothing when the record has none.
std::optional<std::uint64_t> state_cursor(const std::string& state_file,
                                          const std::string& mount_point);

// The record's `last_result` ("success", "failed: ...", ...); "" when none.
std::string state_last_result(const std::string& state_file, const std::string& mount_point);
// Any integer or string field of that record (e.g. "taken_over_usec",
// "last_end_usec", "last_result"); nothing when the file, the record or the
// field is not there (yet).
std::optional<std::int64_t> state_integer(const std::string& state_file,
                                          const std::string& mount_point, const std::string& key);
std::optional<std::string> state_string(const std::string& state_file,
                                        const std::string& mount_point, const std::string& key);

// ---- images to trim ----------------------------------------------------------

// Mounted without discard (btrfs defaults to discard=async, which would trim
// the deletes before the test could).
inline constexpr const char* kNoDiscard = "nodiscard";

// A filesystem on a fresh image, mounted, `count` files of `bytes` written
// and every other one deleted: `count / 2` free extents for a trim to find.
struct FragmentedImage {
  LoopImage image;
  std::uint64_t deleted = 0;
};
FragmentedImage fragmented_image(Fs fs, std::uint64_t size_mib, std::size_t count,
                                 std::uint64_t bytes,
                                 const std::vector<std::string>& mkfs_args = {});

// Two identical untrimmed twins of such an image, both made with
// clone_sparse (docs/design.md), detached; the original is gone.
struct Twins {
  LoopImage first;
  LoopImage second;
  std::uint64_t deleted = 0;
};
Twins fragmented_twins(Fs fs, std::uint64_t size_mib, std::size_t count, std::uint64_t bytes,
                       const std::vector<std::string>& mkfs_args = {});

// trimd never splits an ext4 block group (128 MiB with 4 KiB blocks) across
// chunks; with 1 KiB blocks a group is 8 MiB, so a small image still gives a
// pass of many chunks to interrupt, pause or reload in the middle of.
inline const std::vector<std::string> kExt4SmallGroups = {"-b", "1024"};

// What a trim on one twin may differ from one on the other: max(1%, 4 MiB).
std::uint64_t twin_tolerance(std::uint64_t allocated);

double seconds(std::chrono::steady_clock::duration d);
double mib(std::uint64_t bytes);

}  // namespace trimd::test
