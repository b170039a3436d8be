// Honest progress and what the manager remembers of passes: when TrimStarted
// goes out, waiting vs trimming, the time split, lifetime figures, history.
#include "manager_fixture.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;

namespace {

class ProgressTest : public ManagerTest {
 protected:
  DiscoveredFs fs = make_fs("/mnt/a", "loop0");
  RecordingListener listener;

  std::unique_ptr<Manager> busy_manager(StateMap state = {}) {
    disks["loop0"] = {};
    auto m = make(quick_config(), std::move(state));
    m->set_listener(&listener);
    m->update_filesystems({fs}, now);
    busy.insert("loop0");
    return m;
  }
  bool started() const {
    return std::count(listener.events.begin(), listener.events.end(), "started " + fs.id) > 0;
  }
};

}  // namespace

TEST_F(ProgressTest, ARequestedPassWaitsForBusyDisksNamingTheDiskAndDoesNotAnnounceAStart) {
  auto m = busy_manager();
  m->trim_now({fs.id}, false, now);
  pass_time(*m, 3);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());

  const auto status = m->status(fs.id, now);
  EXPECT_EQ(status->state, FsState::Waiting);
  EXPECT_NE(status->state_reason.find("loop0"), std::string::npos) << status->state_reason;
  EXPECT_FALSE(started()) << "no chunk issued yet";
}

TEST_F(ProgressTest, TrimStartedFollowsTheFirstChunkAndTheStateReadsTrimming) {
  auto m = busy_manager();
  m->trim_now({fs.id}, false, now);
  pass_time(*m, 3);
  m->take_jobs(now, mono);
  busy.clear();
  pass_time(*m, 6);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_TRUE(started());
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Trimming);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  m->take_jobs(now, mono);
  EXPECT_EQ(std::count(listener.events.begin(), listener.events.end(), "started " + fs.id), 1)
      << "once per pass";
}

TEST_F(ProgressTest, APassHeldUpByForegroundIoReadsWaitingNotTrimming) {
  disks["loop0"] = {};
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  busy.insert("loop0");
  pass_time(*m, 1);
  m->take_jobs(now, mono);
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Waiting);
}

TEST_F(ProgressTest, TheFinishedPassSplitsItsTimeIntoTrimmingAndWaiting) {
  auto m = busy_manager();
  m->trim_now({fs.id}, false, now);
  pass_time(*m, 1);
  m->take_jobs(now, mono);  // the pass starts waiting here
  pass_time(*m, 50);
  m->take_jobs(now, mono);
  busy.clear();
  pass_time(*m, 6);  // 56 s waited in all
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  advance(4s);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  run_to_completion(*m);

  const auto status = m->status(fs.id, now);
  EXPECT_EQ(outcome_text(status->last_result), "success");
  EXPECT_GE(status->last_waited, 55s);
  EXPECT_LE(status->last_waited, 57s);
  EXPECT_GE(status->last_trimming, 4s);
  EXPECT_LE(status->last_trimming, 5s);
}

TEST_F(ProgressTest, LifetimeFiguresAddUpAcrossPassesAndSurviveARestart) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  run_to_completion(*m);
  m->trim_now({fs.id}, true, now);
  auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  m->chunk_preempted(jobs[0], now, mono);
  m->chunk_finished(m->take_jobs(now, mono + 1h).at(0), failed(TrimStatus::Error), now, mono);

  const Lifetime life = m->status(fs.id, now)->lifetime;
  EXPECT_EQ(life.passes, 2u);
  EXPECT_EQ(life.failures, 1u);
  EXPECT_EQ(life.preemptions, 1u);
  EXPECT_EQ(life.bytes, 10u * 1000u);

  auto restarted = make(quick_config(), m->persistent_state());
  EXPECT_EQ(restarted->lifetime_totals(), life) << "totals come from the state file";
  EXPECT_EQ(restarted->bytes_trimmed_total(), 10u * 1000u);
}

TEST_F(ProgressTest, HistoryKeepsTheLastTenPassesOldestFirst) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  for (int i = 0; i < 12; ++i) {
    m->trim_now({fs.id}, true, now);
    run_to_completion(*m);
    advance(1min);
  }
  const auto history = m->history("/mnt/a");
  ASSERT_EQ(history.size(), kHistoryLength);
  EXPECT_LT(history.front().second.start, history.back().second.start);
  EXPECT_EQ(history.back().first, "/mnt/a");
  EXPECT_EQ(history.back().second.result.result, PassResult::Success);
  EXPECT_EQ(history.back().second.bytes, 10u * 1000u);
  EXPECT_EQ(m->status(fs.id, now)->lifetime.passes, 12u) << "lifetime counts all passes";
}

TEST_F(ProgressTest, HistoryOfAnUnknownMountPointIsNotFound) {
  auto m = make();
  EXPECT_THROW(m->history("/nowhere"), ManagerError);
  EXPECT_TRUE(m->history("").empty());
}

TEST_F(ProgressTest, ARestartDoesNotPushTheFirstPassOfANeverTrimmedFilesystemLater) {
  Config config = quick_config();
  config.trim.schedule.first_delay = 1h;
  auto m = make(config);
  m->update_filesystems({fs}, now);
  const auto due = *m->status(fs.id, now)->next_trim;
  EXPECT_EQ(m->persistent_state().at(fs.id).first_seen, now);

  advance(50min);
  auto restarted = make(config, m->persistent_state());
  restarted->update_filesystems({fs}, now);
  EXPECT_EQ(*restarted->status(fs.id, now)->next_trim, due)
      << "first_delay from the first sighting";
}

TEST_F(ProgressTest, WithScopeFstabAFilesystemNotInFstabIsDisabledUntilNamed) {
  Config config = quick_config();
  config.trim.scope = TrimPolicy::Scope::Fstab;
  disks["loop0"] = {};
  disks["loop1"] = {};
  auto listed = make_fs("/mnt/b", "loop1");
  listed.in_fstab = true;
  auto m = make(config);
  m->update_filesystems({fs, listed}, now);
  pass_time(*m, 6);
  const auto jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].fs_id, listed.id);
  const auto status = m->status(fs.id, now);
  EXPECT_EQ(status->state, FsState::Disabled);
  EXPECT_NE(status->state_reason.find("fstab"), std::string::npos);

  m->trim_now({fs.id}, true, now);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u) << "named explicitly, it is trimmed";
}
