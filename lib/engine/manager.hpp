// The engine's heart: owns every tracked filesystem, decides when and how
// fast each is trimmed. Single-threaded: the daemon calls it from its event
// loop only. It never blocks and never calls the kernel itself: it hands out
// chunk jobs, which the daemon runs in runner processes and reports back.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config.hpp"
#include "discovery.hpp"
#include "duty.hpp"
#include "fleet_gate.hpp"
#include "fleet_slots.hpp"
#include "idleness.hpp"
#include "pass_outcome.hpp"
#include "preemption.hpp"
#include "state_store.hpp"
#include "takeover.hpp"
#include "time.hpp"
#include "trimmer.hpp"

namespace trimd {

enum class FsState { Waiting, Scheduled, Trimming, Paused, Unsupported, Disabled, Error };
const char* to_string(FsState state);

// The Manager object's State on the bus.
enum class ManagerState { Idle, Trimming, Paused };
const char* to_string(ManagerState state);  // "idle", "trimming", "paused"

// What a filesystem that wants to trim waits for: why the engine holds its
// pass (Wait::reason), the bus's WaitingFor and the metrics' reason label.
// Numbered from 0 without gaps: tests walk the values through to_string().
enum class WaitingFor : std::uint8_t {
  Nothing,        // not held up: trimming (pacing between chunks too), or not due
  Due,            // due and nothing holds it up: it starts at the next chance
  DisksBusy,      // foreground I/O: FsStatus::busy_disk is over FsStatus::busy_limit
  OutsideWindow,  // the schedule's daily window is closed
  DiskShared,     // another filesystem on the same disk has a chunk in flight
  Paused,         // on request
  Retry,          // its mount point vanished mid-chunk: looked at again shortly
  FleetSlot,      // its backend's fleet-wide slots are all held, or etcd is silent
  OnBattery,      // the machine runs on battery and the policy says on_battery = "wait"
  Pacing,         // the duty budget: its last chunk's device time earned a pause (duty.hpp)
};
// The value's word, the one list of them: its key on the bus, in the metrics
// and in the Cockpit page's WAITING_WORDS (cockpit/format.js), "" for
// Nothing; nullptr for a number that is no value. A value without its word
// does not compile (-Wswitch); tests/unit/test_waiting_for.cpp holds the
// page, org.trimd.trimd1(5) and the XML to these words.
const char* to_string(WaitingFor what);

// What `trimctl status` and the bus show of one filesystem.
struct FsStatus {
  std::string id;
  std::string mount_point;
  std::string device;
  std::string fs_type;
  std::string uuid;
  std::vector<std::string> backing_disks;
  FsState state = FsState::Scheduled;
  std::string state_reason;                      // why waiting, disabled, unsupported or in error
  WaitingFor waiting_for = WaitingFor::Nothing;  // while Waiting or Paused
  std::string busy_disk;                         // disks_busy: which disk ...
  IdleLimit busy_limit = IdleLimit::Unseen;      // ... and which limit it is over
  double progress = 0;                           // 0..1 of the current (or last) pass
  std::uint64_t size = 0;
  std::optional<TimePoint> last_trim_start;
  std::optional<TimePoint> last_trim_end;
  std::optional<PassOutcome> last_result;  // none = never trimmed
  std::uint64_t last_bytes_trimmed = 0;
  std::optional<TimePoint> next_trim;  // when the next pass is due (none while one runs)
  bool inline_discard = false;         // discard_mode == Sync
  DiscardMode discard_mode = DiscardMode::None;
  TakeoverView takeover;  // what trimd did about synchronous discard
  // Trimmed gently (gentle_chunk_size, gentle_pause): overdue while its
  // disks are busy, or on battery with on_battery = "gentle".
  bool gentle = false;
  // The last complete pass: its wall time split into trimming and waiting.
  Duration last_trimming{0};
  Duration last_waited{0};
  Lifetime lifetime;  // persisted across restarts
  // The shared backend whose fleet-wide cap its passes count against
  // (empty: not coordinated), and whether it holds one of its slots now.
  std::string fleet_backend;
  bool fleet_slot_held = false;
  // The duty budget its chunks are held to (0 = none), and the device time
  // its chunks have cost since trimd started (lib/policy/duty.hpp).
  double duty = 0;
  Duration discard_busy{0};

  bool operator==(const FsStatus&) const = default;
};

// How the bus layer (and tests) hear about changes. Called on the loop thread.
class ManagerListener {
 public:
  virtual ~ManagerListener() = default;
  virtual void filesystem_added(const FsStatus&) {}
  virtual void filesystem_removed(const std::string& /*id*/) {}
  virtual void filesystem_changed(const FsStatus&) {}
  virtual void trim_started(const std::string& /*id*/) {}
  virtual void trim_finished(const std::string& /*id*/, const PassOutcome& /*outcome*/,
                             std::uint64_t /*bytes*/, Duration /*elapsed*/) {}
  virtual void manager_changed() {}  // State or the lifetime totals
};

// One FITRIM call to make. `disks` are held until the job is reported back.
// What foreground I/O on a chunk's disks does to it.
enum class OnForeground {
  Preempt,      // killed at once: a pass that waits for idle disks
  HoldToLimit,  // held to the job's time_limit from then on: gentle, --ignore-idle
  Ignore,       // nothing: preemption is off ([idle] preempt_interval = 0)
};

struct ChunkJob {
  std::uint64_t serial = 0;
  std::string fs_id;
  TrimTarget target;
  std::string fs_type;
  TrimRange range;
  std::vector<std::string> disks;
  // The filesystem's own block devices (a partition, dm-0): where the bytes
  // it discards are counted, apart from other filesystems on the same disks.
  std::vector<std::string> devices;
  // What foreground I/O reaching its disks does to the chunk.
  OnForeground on_foreground = OnForeground::Preempt;
  // Killed when still in the kernel after this long (chunk_time_limit): the
  // bound on how long trimd keeps the filesystem busy. A runner holding only
  // a detached copy of the mount, with no foreground I/O seen, is held to
  // kMaxChunkTimeLimit instead (chunk_deadline.hpp).
  Duration time_limit{0};
  // Foreground I/O that waits less than this on average does not preempt
  // (0: any does): [idle] preempt_latency, "auto" by the disks' queueing.
  Duration tolerated_latency{0};
};

struct ChunkResult {
  TrimOutcome outcome;
  // Discarded bytes measured from the filesystem's own devices' /proc/diskstats
  // counters, from before the call until its discards completed (see
  // lib/system/discard_meter.hpp); nothing when they could not be read.
  std::optional<std::uint64_t> bytes_discarded;
  Duration elapsed{0};
  // How long the chunk kept its devices busy with discards
  // (chunk_device_time() in lib/policy/duty.hpp): what the duty budget
  // charges it.
  Duration device_time{0};
  // How many discards its devices completed, and the sum of the time each
  // took (diskstats; several in flight at once each count; nothing where
  // they count none): what tells a fast device from a slow one when sizing
  // the next chunk (chunk_sizing.hpp).
  std::uint64_t discards = 0;
  std::optional<Duration> discard_time;
};

class ManagerError : public std::runtime_error {
 public:
  enum class Kind { NotFound, NotSupported, InvalidArgument, Busy };
  ManagerError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct Wait;
struct Pass;

class Manager {
 public:
  Manager(Config config, StateMap state, TimePoint now);
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // Listeners hear of changes in the order they were added (the bus, the
  // metrics file, ...).
  void add_listener(ManagerListener* listener) { listeners_.push_back(listener); }
  void remove_listener(ManagerListener* listener) { std::erase(listeners_, listener); }
  // Just this one (none for nullptr): for tests that watch alone.
  void set_listener(ManagerListener* listener) {
    listeners_.clear();
    if (listener) add_listener(listener);
  }
  const Config& config() const { return config_; }
  // A reloaded config: policies and schedules are recomputed.
  void set_config(Config config, TimePoint now);

  // --- inputs --------------------------------------------------------------
  // The complete list of tracked filesystems, after every mount or udev change.
  // Settles clone ids itself; callers that hand `found` on settle first.
  void update_filesystems(std::vector<DiscoveredFs> found, TimePoint now);
  // A copy of an image mounted alone gets the id it had beside its clones
  // ("uuid-<UUID>-dev-<source>") when the state file has seen that UUID
  // cloned, and a record kept under plain "uuid-<UUID>" moves to the copy
  // it was written for (by device, else mount point).
  void settle_clone_ids(std::vector<DiscoveredFs>& found);
  // `own`: what trimd's runners read and wrote per disk since the last sample.
  void observe_diskstats(const std::vector<DiskStat>& sample, TimePoint now,
                         const std::map<std::string, IoBytes>& own = {});

  // --- the trimming loop ---------------------------------------------------
  // `now` is wall-clock (due dates, windows, the state file); `mono` is the
  // monotonic clock that paces chunks. The one-argument forms read the real
  // monotonic clock.
  // The chunks to start now; each must be reported back exactly once, with
  // chunk_finished, chunk_preempted or chunk_interrupted.
  std::vector<ChunkJob> take_jobs(TimePoint now, SteadyPoint mono);
  std::vector<ChunkJob> take_jobs(TimePoint now) { return take_jobs(now, SteadyClock::now()); }
  void chunk_finished(const ChunkJob& job, const ChunkResult& result, TimePoint now,
                      SteadyPoint mono);
  void chunk_finished(const ChunkJob& job, const ChunkResult& result, TimePoint now) {
    chunk_finished(job, result, now, SteadyClock::now());
  }
  // What a chunk that did not finish had discarded (nothing: not measured)
  // and the device time that cost, told before chunk_preempted,
  // chunk_timed_out or chunk_interrupted: the pass's bytes are what its
  // devices discarded, redone work included, and the duty budget charges
  // the device time whatever became of the chunk.
  void chunk_discarded(const ChunkJob& job, std::optional<std::uint64_t> bytes,
                       Duration device_time = Duration{0});
  // Killed for foreground I/O (or died on its own): the cursor stays at the
  // chunk's start, the filesystem waits for the next idle window, and a
  // chunk preempted again and again shrinks.
  void chunk_preempted(const ChunkJob& job, TimePoint now, SteadyPoint mono);
  // Killed for running past its time limit: the cursor stays, the
  // filesystem rests a moment (a umount gets through), the chunk is retried
  // at half the length; a pass whose chunks keep overrunning fails.
  void chunk_timed_out(const ChunkJob& job, TimePoint now, SteadyPoint mono);
  // Killed on request (pause, cancel, shutdown): the cursor stays too.
  void chunk_interrupted(const ChunkJob& job, TimePoint now, SteadyPoint mono);
  // Serials of jobs in flight that must be killed now (their filesystem was
  // paused, its pass cancelled, or it left the mount table; or a sleep is
  // coming). The manager decides; the daemon kills.
  std::vector<std::uint64_t> jobs_to_stop() const;
  // The mount table changed; `mount_ids` are the mounts in it now. A chunk
  // whose mount is not among them is to be stopped at once (jobs_to_stop),
  // ahead of the rescan that forgets its filesystem.
  void mounts_now(const std::set<int>& mount_ids);
  // The latest time take_jobs should be called again (a pause ends, a pass
  // becomes due, a window opens). Diskstats samples may call it sooner.
  TimePoint next_wakeup(TimePoint now, SteadyPoint mono) const;
  TimePoint next_wakeup(TimePoint now) const { return next_wakeup(now, SteadyClock::now()); }
  // Shutting down: hand out no more jobs; running ones still report back.
  void stop();
  bool jobs_in_flight() const { return !busy_disks_.empty(); }

  // --- control (bus, --once) -------------------------------------------------
  // An empty list means every filesystem; named ones that cannot be found or
  // trimmed throw ManagerError.
  void trim_now(const std::vector<std::string>& ids, bool ignore_idle, TimePoint now);
  void pause(const std::vector<std::string>& ids, TimePoint now);
  void resume(const std::vector<std::string>& ids, TimePoint now);
  void cancel(const std::vector<std::string>& ids, TimePoint now);
  void notify_freed(const std::string& id, std::uint64_t bytes, TimePoint now);

  // --- inline discard takeover (lib/engine/takeover_controller.hpp decides) ---
  // What to show of the filesystem's takeover, and the record to persist
  // (nothing = trimd owes it no `discard`). A takeover makes the first pass
  // due soon (first_pass_after_takeover).
  void set_takeover(const std::string& id, const TakeoverView& view,
                    const std::optional<TakeoverRecord>& record, TimePoint now);

  // --- the fleet (docs/fleet.md) ---------------------------------------------
  // Where slots are asked for; none (the default): no filesystem waits for one.
  void set_fleet_gate(FleetGate* gate) { fleet_gate_ = gate; }
  // The gate's answer about `id`'s claim (`detail`: the holders while
  // waiting, the error when unreachable).
  void fleet_answer(const std::string& id, SlotAnswer answer, const std::string& detail,
                    TimePoint now);
  // The gate starts afresh (a new [fleet] policy): every claim is gone, a
  // chunk trimming on one is stopped, and passes ask again.
  void fleet_restarted(TimePoint now);
  // How long filesystems have waited for slots since start, all together.
  Duration fleet_slot_waited() const { return fleet_waited_; }

  // --- the machine: power and sleep (daemon/power_watch.*, sleep_watch.*) ----
  // On battery or not (machines without a battery: never). Passes that are
  // not asked for wait, or go gently, as each filesystem's on_battery says.
  void set_on_battery(bool on_battery, TimePoint now);
  bool on_battery() const { return on_battery_; }
  // A sleep or shutdown is coming: no chunk starts until woke(), and every
  // chunk in flight is to be stopped (jobs_to_stop), its cursor kept.
  void sleep_coming(TimePoint now);
  // Back from sleep (or the shutdown was called off): the disks count as
  // just busy, since a machine that wakes is rarely idle, and the passes go
  // on from their cursors once they are idle again.
  void woke(TimePoint now);
  bool asleep() const { return asleep_; }
  // Whether a chunk may start before anything changes: one is in flight, or
  // a pass is due or under way and only its disks or pacing hold it (not
  // pause, the time window, the battery or sleep). The daemon holds its
  // delay lock on sleep while this is true.
  bool chunks_may_start(TimePoint now) const;

  // --- what it knows ---------------------------------------------------------
  std::optional<std::string> id_for_mount_point(std::string_view mount_point) const;
  std::vector<FsStatus> statuses(TimePoint now) const;
  std::optional<FsStatus> status(const std::string& id, TimePoint now) const;
  ManagerState state() const;
  std::uint64_t bytes_trimmed_total() const { return totals_.bytes; }
  // Over every filesystem in the state file, across restarts.
  const Lifetime& lifetime_totals() const { return totals_; }
  // The remembered passes of the filesystem at `mount_point` (tracked or
  // only in the state file; the newest record wins), oldest first; every
  // remembered filesystem's when empty. Throws ManagerError NotFound.
  std::vector<std::pair<std::string, PassHistoryEntry>> history(std::string_view mount_point) const;
  // True while any pass is active (running, waiting for idleness or paused).
  bool passes_active() const;
  // Results of passes finished since start: id -> result.
  const std::map<std::string, PassOutcome>& finished_passes() const { return finished_; }
  const IdlenessModel& idleness() const { return idleness_; }

  // The persistent state; `state_dirty` says whether it changed since the
  // last mark_state_saved().
  const StateMap& persistent_state() const { return records_; }
  bool state_dirty() const { return state_dirty_; }
  void mark_state_saved() { state_dirty_ = false; }

 private:
  struct Tracked;
  enum class Decision { Run, Wait };

  Tracked* find(const std::string& id);
  std::vector<Tracked*> select(const std::vector<std::string>& ids);
  void apply_policy(Tracked& fs, TimePoint now);
  void reschedule(Tracked& fs, TimePoint now);
  void start_pass(Tracked& fs, TimePoint now);
  void set_wait(Tracked& fs, Wait wait, TimePoint now);
  void announce_start(Tracked& fs);
  void count_finished(FsRecord& record, const Pass& pass, const PassHistoryEntry& entry);
  void finish_pass(Tracked& fs, PassOutcome outcome, TimePoint now);
  void forget_vanished(Tracked& fs);
  std::optional<ChunkJob> next_job(Tracked& fs, TimePoint now, SteadyPoint mono);
  bool ready_to_trim(Tracked& fs, TimePoint now, SteadyPoint mono);
  ChunkJob make_job(Tracked& fs, const TrimRange& range, TimePoint now);
  void chunk_ok(Tracked& fs, const ChunkJob& job, const ChunkResult& result, TimePoint now,
                SteadyPoint mono);
  Tracked* chunk_returned(const ChunkJob& job, TimePoint now);
  void after_chunk(Tracked& fs, TimePoint now);
  bool disks_free(const Tracked& fs) const;
  bool slot_required(const Tracked& fs) const;
  bool slot_allows(Tracked& fs, TimePoint now);
  std::optional<TimePoint> fleet_local_at(const Tracked& fs) const;
  void review_slot(Tracked& fs, TimePoint now, SteadyPoint mono);
  void give_back_slot(Tracked& fs, std::string_view why, TimePoint now);
  void log_slot_lost(const Tracked& fs, const std::string& why);
  bool wants_to_run(const Tracked& fs, TimePoint now) const;
  // The duty budget (manager_duty.cpp).
  DutyBudget budget_of(const Tracked& fs) const;
  void pace(Tracked& fs, const std::vector<std::string>& disks, Duration device_time, TimePoint now,
            SteadyPoint mono);
  const DutyPause* pause_of(const Tracked& fs, SteadyPoint mono) const;
  bool paced(Tracked& fs, TimePoint now, SteadyPoint mono);
  void pacing_status(const Tracked& fs, FsStatus& status, TimePoint now) const;
  void record_progress(Tracked& fs);
  void notify(Tracked& fs, TimePoint now);
  void notify_manager();
  FsStatus make_status(const Tracked& fs, TimePoint now) const;

  Config config_;
  StateMap records_;
  bool state_dirty_ = false;
  IdlenessModel idleness_;
  TimePoint started_at_;
  std::map<std::string, std::unique_ptr<Tracked>> filesystems_;
  std::set<std::string> busy_disks_;
  // Disks whose duty budget holds the next chunk, of any filesystem on
  // them, until the pause its last chunk earned has passed.
  std::map<std::string, DutyPause> paced_disks_;
  std::map<std::string, PassOutcome> finished_;
  std::vector<ManagerListener*> listeners_;
  std::uint64_t next_serial_ = 1;
  Lifetime totals_;
  bool paused_all_ = false;
  bool stopping_ = false;
  bool on_battery_ = false;
  bool asleep_ = false;
  FleetGate* fleet_gate_ = nullptr;
  Duration fleet_waited_{0};
  // What manager_changed() last announced.
  std::optional<std::pair<ManagerState, Lifetime>> last_manager_sent_;
};

}  // namespace trimd
