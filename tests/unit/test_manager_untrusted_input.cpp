// The manager given values that no sane policy or intact state file holds
// (issue 8, F6 and F7): durations far beyond what a clock can add, and a
// cursor beyond the filesystem's end. Nothing overflows; a pass starts over.
#include <gtest/gtest.h>

#include <cstdint>

#include "manager_fixture.hpp"

namespace trimd::test {
namespace {

const Duration kHundredThousandDays = std::chrono::hours{24 * 100000};

TEST_F(ManagerTest, AnEnormousOverdueGraceNeverMakesABusyFilesystemOverdue) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0");
  Config config = quick_config();
  config.trim.schedule.overdue_grace = kHundredThousandDays;
  auto m = make(config, trimmed_at(fs, now - std::chrono::hours{24 * 30}));
  m->update_filesystems({fs}, now);
  busy.insert("loop0");
  pass_time(*m, 10);
  EXPECT_TRUE(m->take_jobs(now, mono).empty()) << "busy disks and not overdue: no gentle pass";
  EXPECT_FALSE(m->status(fs.id, now)->gentle);
}

TEST_F(ManagerTest, AnEnormousFirstDelayPutsTheFirstPassInTheFutureNotThePast) {
  auto fs = make_fs("/mnt/a", "loop0");
  Config config = quick_config();
  config.trim.schedule.first_delay = kHundredThousandDays;
  auto m = make(config);
  m->update_filesystems({fs}, now);
  const auto status = m->status(fs.id, now);
  ASSERT_TRUE(status->next_trim);
  EXPECT_GT(*status->next_trim, now + std::chrono::hours{24 * 365});
  pass_time(*m, 10);
  EXPECT_TRUE(m->take_jobs(now, mono).empty());
}

TEST_F(ManagerTest, ASavedCursorBeyondTheFilesystemStartsThePassOverFromZero) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0", 4 * GiB);
  StateMap state;
  state[fs.id].cursor = static_cast<std::uint64_t>(INT64_MAX);
  state[fs.id].pass_start = now - 1h;
  state[fs.id].pass_bytes = 12345;
  Config config = quick_config();
  config.trim.chunk_bytes = GiB;
  auto m = make(config, state);
  auto jobs = track_and_start(*m, fs);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].range.start, 0u);
  m->chunk_finished(jobs[0], ok(jobs[0]), now, mono);
  EXPECT_EQ(run_to_completion(*m), 3);
  EXPECT_EQ(m->status(fs.id, now)->last_result, "success");
}

TEST_F(ManagerTest, ASavedCursorAtTheEndStillFinishesThatPass) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0", 4 * GiB);
  StateMap state;
  state[fs.id].cursor = 4 * GiB;
  state[fs.id].pass_start = now - 1h;
  auto m = make(quick_config(), state);
  EXPECT_TRUE(track_and_start(*m, fs).empty());
  EXPECT_EQ(m->status(fs.id, now)->last_result, "success");
}

}  // namespace
}  // namespace trimd::test
