// The manager given values that no sane policy or intact state file holds
// (issue 8, F6 and F7): durations far beyond what a clock can add, and a
// cursor beyond the filesystem's end. Nothing overflows; a pass starts over.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <cstdint>
#include <limits>

#include "manager_fixture.hpp"
#include "metrics.hpp"

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
  EXPECT_EQ(outcome_text(m->status(fs.id, now)->last_result), "success");
}

TEST_F(ManagerTest, ASavedCursorAtTheEndStillFinishesThatPass) {
  disks["loop0"] = {};
  auto fs = make_fs("/mnt/a", "loop0", 4 * GiB);
  StateMap state;
  state[fs.id].cursor = 4 * GiB;
  state[fs.id].pass_start = now - 1h;
  auto m = make(quick_config(), state);
  EXPECT_TRUE(track_and_start(*m, fs).empty());
  EXPECT_EQ(outcome_text(m->status(fs.id, now)->last_result), "success");
}

// Issue 16 item 11: "next trim ... 173 years left".
TEST_F(ManagerTest, AFirstSightingInTheFutureCountsAsNowAndStaysRepaired) {
  auto fs = make_fs("/mnt/a", "loop0");
  Config config = quick_config();
  config.trim.schedule.first_delay = std::chrono::minutes{2};
  StateMap state;
  state[fs.id].first_seen = from_usec(kLatestStoredUsec);
  auto m = make(config, state);
  m->update_filesystems({fs}, now);
  EXPECT_EQ(m->status(fs.id, now)->next_trim, now + std::chrono::minutes{2});
  EXPECT_EQ(m->persistent_state().at(fs.id).first_seen, now);
  advance(std::chrono::minutes{1});
  m->update_filesystems({fs}, now);
  EXPECT_EQ(m->status(fs.id, now)->next_trim, now + std::chrono::minutes{1}) << "not moved on";
}

TEST_F(ManagerTest, ALastPassEndingInTheFutureCountsAsEndedWhenTrimdStarted) {
  auto fs = make_fs("/mnt/a", "loop0");
  Config config = quick_config();
  const TimePoint started = now;
  auto m = make(config, trimmed_at(fs, from_usec(kLatestStoredUsec)));
  advance(std::chrono::hours{1});
  m->update_filesystems({fs}, now);
  const auto due = started + config.trim.schedule.interval;
  EXPECT_EQ(m->status(fs.id, now)->next_trim, due);
  advance(std::chrono::hours{1});
  m->update_filesystems({fs}, now);
  EXPECT_EQ(m->status(fs.id, now)->next_trim, due) << "not moved on at every rescan";
}

// Issue 16 item 11: three lifetime totals at INT64_MAX wrapped.
TEST_F(ManagerTest, LifetimeTotalsSaturateAtTheLargestFigureOnTheBusAndInMetrics) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
  disks["loop0"] = {};
  StateMap state;
  std::vector<DiscoveredFs> found;
  for (const char* name : {"/mnt/a", "/mnt/b", "/mnt/c"}) {
    found.push_back(make_fs(name, "loop0"));
    state[found.back().id].lifetime = Lifetime{kMax, kMax, kMax, kMax, kMax};
  }
  auto m = make(quick_config(), state);
  const Lifetime all_max{kMax, kMax, kMax, kMax, kMax};
  EXPECT_EQ(m->lifetime_totals(), all_max);
  for (const auto& job : track_and_start(*m, found[0])) m->chunk_finished(job, ok(job), now, mono);
  run_to_completion(*m);
  ASSERT_EQ(outcome_text(m->status(found[0].id, now)->last_result), "success");
  // What the bus's properties (type t) and the metrics file give out.
  EXPECT_EQ(m->lifetime_totals(), all_max);
  EXPECT_EQ(m->status(found[0].id, now)->lifetime, all_max);
  const std::string text = render_metrics(m->statuses(now), m->lifetime_totals());
  EXPECT_THAT(text, testing::HasSubstr("\ntrimd_bytes_trimmed_total 9223372036854775807\n"));
  EXPECT_THAT(text, testing::HasSubstr("\ntrimd_passes_total 9223372036854775807\n"));
}

}  // namespace
}  // namespace trimd::test
