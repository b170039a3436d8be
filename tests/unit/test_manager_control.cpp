// The manager's control calls (TrimNow, Pause, Resume, Cancel, NotifyFreed)
// and what listeners hear.
#include "manager_fixture.hpp"

using namespace trimd;
using namespace trimd::test;
using namespace std::chrono_literals;

TEST_F(ManagerTest, PauseStopsNewChunksAndResumeContinuesFromTheCursor) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->pause({fs.id}, now);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);  // the chunk in the kernel completes
  pass_time(*m, 10);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->status(fs.id, now)->state, FsState::Paused);

  m->resume({fs.id}, now);
  jobs = m->take_jobs(now, mono);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.start, GiB);
}

TEST_F(ManagerTest, PausingEverythingAlsoHoldsFilesystemsThatAppearLater) {
  disks["sda"] = {};
  disks["sdb"] = {};
  auto m = make();
  m->pause({}, now);
  m->update_filesystems({make_fs("/a", "sda"), make_fs("/b", "sdb")}, now);
  pass_time(*m, 6);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(m->state(), ManagerState::Paused);
  m->resume({}, now);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 2u);
}

TEST_F(ManagerTest, CancelEndsThePassAndRecordsCancelled) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make();
  auto jobs = track_and_start(*m, fs);
  m->cancel({fs.id}, now);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  EXPECT_EQ(outcome_text(m->status(fs.id, now)->last_result), "cancelled");
  EXPECT_FALSE(m->passes_active());
}

TEST_F(ManagerTest, TrimNowIgnoringIdleRunsOnBusyDisksBeforeTheFilesystemIsDue) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make(quick_config(), trimmed_at(fs, now));
  m->update_filesystems({fs}, now);
  busy.insert("loop0");
  pass_time(*m, 10);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  m->trim_now({fs.id}, true, now);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerTest, NotifyFreedMakesTheFilesystemDueAtTheNextIdleWindow) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  auto m = make(quick_config(), trimmed_at(fs, now));
  m->update_filesystems({fs}, now);
  pass_time(*m, 10);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
  m->notify_freed(fs.id, 50 * GiB, now);
  EXPECT_EQ(m->take_jobs(now, mono).size(), 1u);
}

TEST_F(ManagerTest, UnknownIdsAreRejectedWithNotFound) {
  auto m = make();
  try {
    m->trim_now({"uuid-nope"}, false, now);
    FAIL() << "expected ManagerError";
  } catch (const ManagerError& e) {
    EXPECT_EQ(e.kind(), ManagerError::Kind::NotFound);
  }
}

TEST_F(ManagerTest, ListenersHearAboutFilesystemsAndPasses) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0", 2 * GiB);
  auto m = make();
  RecordingListener listener;
  m->set_listener(&listener);
  m->update_filesystems({fs}, now);
  pass_time(*m, 6);
  run_to_completion(*m);
  m->update_filesystems({}, now);
  std::vector<std::string> expected = {"added /mnt/a", "started " + fs.id,
                                       "finished " + fs.id + " success 2000", "removed " + fs.id};
  EXPECT_EQ(listener.events, expected);
}

TEST_F(ManagerTest, StopHandsOutNoMoreChunks) {
  disks["loop0"] = {};
  auto m = make();
  m->update_filesystems({make_fs("/mnt/a", "loop0")}, now);
  pass_time(*m, 6);
  m->stop();
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
}
