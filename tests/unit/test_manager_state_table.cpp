// Every ordered pair of control events on one filesystem, from three
// starting points (no pass, a pass between chunks, a chunk in the kernel),
// against the written semantics below. The expected final state of each
// case comes from that table (the `Model`), not from the manager's code.
//
//   event      | effect on the filesystem
//   -----------+----------------------------------------------------------------
//   TrimNow    | un-pauses it; joins the pass under way, or asks for a new one
//              | (also after a Cancel whose chunk is still in the kernel)
//   Pause      | pauses it; a chunk in flight is stopped, the cursor stays
//   Resume     | un-pauses it; the pass goes on from the cursor
//   Cancel     | drops a TrimNow not yet started; ends the pass "cancelled"
//              | (when its chunk in flight has come back); next pass on schedule
//   Pause all  | pauses it and every filesystem that appears until Resume all
//   Resume all | un-pauses it and ends the global pause
//   Reload     | nothing: passes, cursors and pauses are kept
//   unmount    | forgotten once no chunk of it is in flight; the pass's cursor
//              | stays in the state; its pause and pending TrimNow end with it
//   remount    | tracked again: paused if a global pause is in force, and an
//              | unfinished pass resumes at its cursor
//   TrimNow, Pause, Resume, Cancel on a filesystem trimd no longer tracks:
//   NotFound, nothing changes. Manager.State: "trimming" while a chunk runs
//   or a pass can go on; else "paused" when everything trimmable is paused
//   and there is a paused filesystem or a global pause; else "idle".
#include <ostream>
#include <string>
#include <tuple>

#include "manager_fixture.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;

namespace {

enum class Event { TrimNow, Pause, Resume, Cancel, PauseAll, ResumeAll, Reload, Unmount, Remount };
enum class Start { NoPass, BetweenChunks, ChunkInFlight };

const char* name_of(Event e) {
  switch (e) {
    case Event::TrimNow: return "TrimNow";
    case Event::Pause: return "Pause";
    case Event::Resume: return "Resume";
    case Event::Cancel: return "Cancel";
    case Event::PauseAll: return "PauseAll";
    case Event::ResumeAll: return "ResumeAll";
    case Event::Reload: return "Reload";
    case Event::Unmount: return "Unmount";
    case Event::Remount: return "Remount";
  }
  return "?";
}

const char* name_of(Start s) {
  switch (s) {
    case Start::NoPass: return "WithNoPass";
    case Start::BetweenChunks: return "BetweenChunks";
    case Start::ChunkInFlight: return "WithAChunkInFlight";
  }
  return "?";
}

void PrintTo(Event e, std::ostream* out) { *out << name_of(e); }
void PrintTo(Start s, std::ostream* out) { *out << name_of(s); }

// What is observed at the end of a case.
struct Final {
  bool tracked = true;
  FsState state = FsState::Scheduled;  // when tracked
  bool pass_kept = false;              // a cursor in the persistent state
  std::optional<PassOutcome> last_result;
  ManagerState manager_state = ManagerState::Idle;
  bool not_found = false;  // some call answered NotFound

  bool operator==(const Final&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Final& f) {
  return out << "{tracked " << f.tracked << ", " << to_string(f.state) << ", pass kept "
             << f.pass_kept << ", last \"" << outcome_text(f.last_result) << "\", manager "
             << to_string(f.manager_state) << ", not found " << f.not_found << "}";
}

// The table above, as a state machine over a few booleans.
struct Model {
  bool tracked = true;
  bool mounted = true;
  bool paused = false;
  bool paused_all = false;
  bool pass = false;
  bool request = false;
  bool in_flight = false;
  bool cancel_pending = false;
  bool not_found = false;
  std::optional<PassOutcome> last;

  void apply(Event e) {
    const bool per_fs =
        e == Event::TrimNow || e == Event::Pause || e == Event::Resume || e == Event::Cancel;
    if (per_fs && !tracked) {
      not_found = true;
      return;
    }
    switch (e) {
      case Event::TrimNow:
        paused = false;
        if (!pass || cancel_pending) request = true;
        break;
      case Event::Pause: paused = true; break;
      case Event::Resume: paused = false; break;
      case Event::Cancel:
        request = false;
        if (pass && in_flight) cancel_pending = true;
        if (pass && !in_flight) end_cancelled();
        break;
      case Event::PauseAll: paused_all = paused = true; break;
      case Event::ResumeAll: paused_all = paused = false; break;
      case Event::Reload: break;
      case Event::Unmount:
        mounted = false;
        if (!in_flight) forget();
        break;
      case Event::Remount:
        if (!tracked) {
          tracked = true;
          paused = paused_all;
        }
        mounted = true;
        break;
    }
  }
  void end_cancelled() {
    pass = cancel_pending = false;
    last = PassOutcome{PassResult::Cancelled, {}};
  }
  void forget() { tracked = paused = request = false; }
  // The chunk comes back, then the loop hands out what it may.
  Final finish() {
    in_flight = false;
    if (cancel_pending) end_cancelled();
    if (!mounted) forget();
    const bool trimming = tracked && !paused && (pass || request);
    if (trimming) pass = true;
    Final f;
    f.tracked = tracked;
    f.state = paused ? FsState::Paused : trimming ? FsState::Trimming : FsState::Scheduled;
    f.pass_kept = pass;
    f.last_result = last;
    f.not_found = not_found;
    f.manager_state = trimming                          ? ManagerState::Trimming
                      : (tracked ? paused : paused_all) ? ManagerState::Paused
                                                        : ManagerState::Idle;
    return f;
  }
};

using Case = std::tuple<Start, Event, Event>;

class StateTable : public ManagerTest, public ::testing::WithParamInterface<Case> {
 protected:
  DiscoveredFs fs = make_fs("/mnt/a", "loop0");
  std::unique_ptr<Manager> m;
  std::optional<ChunkJob> out;  // the chunk in the kernel
  bool stop_sent = false;
  bool not_found = false;

  Model start(Start s) {
    disks["loop0"] = {};
    Model model;
    if (s == Start::NoPass) {
      m = make(quick_config(), trimmed_at(fs, now));
      m->update_filesystems({fs}, now);
      pass_time(*m, 6);
      EXPECT_TRUE(m->take_jobs(now, mono).empty());
      model.last = PassOutcome{};
      return model;
    }
    m = make();
    auto jobs = track_and_start(*m, fs);
    EXPECT_EQ(jobs.size(), 1u);
    model.pass = true;
    if (s == Start::ChunkInFlight) {
      out = jobs.at(0);
      model.in_flight = true;
    } else {
      m->chunk_finished(jobs.at(0), ok(jobs.at(0)), now, mono);
    }
    return model;
  }

  // A call naming the filesystem: NotFound is the only error expected.
  template <typename Call>
  void per_fs(Call call) {
    try {
      call(std::vector<std::string>{fs.id});
    } catch (const ManagerError& e) {
      EXPECT_EQ(e.kind(), ManagerError::Kind::NotFound);
      not_found = true;
    }
  }

  void apply(Event e) {
    switch (e) {
      case Event::TrimNow: per_fs([&](const auto& ids) { m->trim_now(ids, false, now); }); break;
      case Event::Pause: per_fs([&](const auto& ids) { m->pause(ids, now); }); break;
      case Event::Resume: per_fs([&](const auto& ids) { m->resume(ids, now); }); break;
      case Event::Cancel: per_fs([&](const auto& ids) { m->cancel(ids, now); }); break;
      case Event::PauseAll: m->pause({}, now); break;
      case Event::ResumeAll: m->resume({}, now); break;
      case Event::Reload: m->set_config(quick_config(), now); break;
      case Event::Unmount: m->update_filesystems({}, now); break;
      case Event::Remount: m->update_filesystems({fs}, now); break;
    }
    // What the daemon does after every call: stop the chunks the manager names.
    for (std::uint64_t serial : m->jobs_to_stop())
      if (out && serial == out->serial) stop_sent = true;
  }

  Final finish() {
    advance(10ms);
    if (out) {
      if (stop_sent)
        m->chunk_interrupted(*out, now, mono);
      else
        m->chunk_finished(*out, ok(*out), now, mono);
    }
    advance(10ms);
    sample(*m);
    m->take_jobs(now, mono);
    Final f;
    const auto status = m->status(fs.id, now);
    f.tracked = status.has_value();
    if (status) f.state = status->state;
    const auto& records = m->persistent_state();
    const auto record = records.find(fs.id);
    f.pass_kept = record != records.end() && record->second.cursor.has_value();
    if (record != records.end()) f.last_result = record->second.last_result;
    f.manager_state = m->state();
    f.not_found = not_found;
    return f;
  }
};

TEST_P(StateTable, EndsInTheStateTheSemanticsGive) {
  const auto [s, first, second] = GetParam();
  Model model = start(s);
  model.apply(first);
  model.apply(second);
  const Final expected = model.finish();

  apply(first);
  apply(second);
  EXPECT_EQ(finish(), expected);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto [s, first, second] = info.param;
  return std::string(name_of(first)) + "Then" + name_of(second) + name_of(s);
}

INSTANTIATE_TEST_SUITE_P(
    EveryPair, StateTable,
    ::testing::Combine(::testing::Values(Start::NoPass, Start::BetweenChunks, Start::ChunkInFlight),
                       ::testing::Values(Event::TrimNow, Event::Pause, Event::Resume, Event::Cancel,
                                         Event::PauseAll, Event::ResumeAll, Event::Reload,
                                         Event::Unmount, Event::Remount),
                       ::testing::Values(Event::TrimNow, Event::Pause, Event::Resume, Event::Cancel,
                                         Event::PauseAll, Event::ResumeAll, Event::Reload,
                                         Event::Unmount, Event::Remount)),
    case_name);

// Global versus per-filesystem pause (Manager.State), beyond pairs.
class GlobalPause : public ManagerTest {
 protected:
  DiscoveredFs a = make_fs("/mnt/a", "sda");
  DiscoveredFs b = make_fs("/mnt/b", "sdb");
  std::unique_ptr<Manager> m = make();

  void SetUp() override {
    disks["sda"] = {};
    disks["sdb"] = {};
    m->update_filesystems({a}, now);
    pass_time(*m, 6);
    m->pause({}, now);
  }
};

TEST_F(GlobalPause, ResumingOneFilesystemEndsPausedButKeepsNewFilesystemsPaused) {
  m->resume({a.id}, now);
  EXPECT_NE(m->state(), ManagerState::Paused);
  m->update_filesystems({a, b}, now);
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].fs_id, a.id);
  EXPECT_EQ(m->status(b.id, now)->state, FsState::Paused);
  EXPECT_EQ(m->state(), ManagerState::Trimming);
}

TEST_F(GlobalPause, TrimNowOnOneFilesystemEndsPaused) {
  m->trim_now({a.id}, false, now);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
  EXPECT_EQ(m->state(), ManagerState::Trimming);
}

TEST_F(GlobalPause, IsPausedWithNothingMountedAndHoldsWhatIsMountedNext) {
  m->update_filesystems({}, now);
  EXPECT_EQ(m->state(), ManagerState::Paused);
  m->update_filesystems({b}, now);
  pass_time(*m, 6);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->status(b.id, now)->state, FsState::Paused);
  m->resume({}, now);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

}  // namespace
