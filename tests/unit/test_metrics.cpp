// The Prometheus text file: its content, its atomic replacement, and
// promtool's verdict on it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ci_rule.hpp"
#include "fifo_guard.hpp"
#include "metrics.hpp"
#include "utf8.hpp"

using namespace trimd;
using testing::HasSubstr;
using testing::Not;

namespace {

namespace fs = std::filesystem;

FsStatus trimmed_fs() {
  FsStatus s;
  s.id = "a";
  s.mount_point = "/srv/vm \"images\"";
  s.fs_type = "ext4";
  s.state = FsState::Waiting;
  s.waiting_for = WaitingFor::DisksBusy;
  s.busy_disk = "sda";
  s.busy_limit = IdleLimit::Iops;
  s.last_trim_start = from_usec(1'700'000'000'000'000);
  s.last_trim_end = from_usec(1'700'000'060'000'000);
  s.last_result = PassOutcome{PassResult::Failed, "Input/output error"};
  s.last_bytes_trimmed = 4096;
  s.last_trimming = std::chrono::seconds{8};
  s.last_waited = std::chrono::seconds{52};
  s.lifetime = Lifetime{1 << 30, 3, 2, 1, 1};
  s.size = 10ull << 30;
  s.inline_discard = true;
  return s;
}

FsStatus fresh_fs() {
  FsStatus s;
  s.id = "b";
  s.mount_point = "/home";
  s.fs_type = "xfs";
  s.state = FsState::Scheduled;
  s.next_trim = from_usec(1'800'000'000'000'000);
  return s;
}

std::string read_text(const fs::path& file) {
  std::ifstream in{file};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class MetricsFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/trimd-metrics-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

}  // namespace

TEST(Metrics, GiveLifetimeCountersPerFilesystemAndInTotal) {
  const auto text = render_metrics({trimmed_fs(), fresh_fs()}, Lifetime{1 << 30, 3, 2, 1, 1});
  EXPECT_THAT(
      text,
      HasSubstr(
          "# TYPE trimd_bytes_trimmed_total counter\ntrimd_bytes_trimmed_total 1073741824\n"));
  EXPECT_THAT(text, HasSubstr("trimd_filesystem_passes_total{mount_point=\"/srv/vm "
                              "\\\"images\\\"\",fs_type=\"ext4\"} 3\n"));
  EXPECT_THAT(
      text,
      HasSubstr("trimd_filesystem_pass_failures_total{mount_point=\"/home\",fs_type=\"xfs\"} 0\n"));
}

TEST(Metrics, GiveTheLastPassSplitIntoTrimmingAndWaitingWithItsResult) {
  const auto text = render_metrics({trimmed_fs()}, {});
  EXPECT_THAT(text, HasSubstr("phase=\"trimming\"} 8\n"));
  EXPECT_THAT(text, HasSubstr("phase=\"waiting\"} 52\n"));
  EXPECT_THAT(text, HasSubstr("result=\"failed\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("result=\"success\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("trimd_filesystem_last_pass_end_timestamp_seconds{mount_point=\"/srv/"
                              "vm \\\"images\\\"\",fs_type=\"ext4\"} 1700000060\n"));
}

TEST(Metrics, GiveTheStateAndWhatAWaitingFilesystemWaitsFor) {
  const auto text = render_metrics({trimmed_fs(), fresh_fs()}, {});
  EXPECT_THAT(text, HasSubstr("state=\"waiting\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("fs_type=\"xfs\",state=\"scheduled\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("reason=\"disks_busy\",disk=\"sda\",limit=\"iops\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("trimd_filesystem_waiting{mount_point=\"/home\"")));
  EXPECT_THAT(
      text,
      HasSubstr("trimd_filesystem_inline_discard{mount_point=\"/home\",fs_type=\"xfs\"} 0\n"));
}

TEST(Metrics, ShowTheFleetSlotsOnlyWhereAFilesystemIsCoordinated) {
  EXPECT_THAT(render_metrics({trimmed_fs(), fresh_fs()}, {}, std::chrono::seconds{7}),
              Not(HasSubstr("trimd_fleet_")));
  FsStatus waiting = trimmed_fs();
  waiting.waiting_for = WaitingFor::FleetSlot;
  waiting.fleet_backend = "pool-a";
  FsStatus holding = fresh_fs();
  holding.fleet_backend = "pool-a";
  holding.fleet_slot_held = true;
  const auto text = render_metrics({waiting, holding}, {}, std::chrono::milliseconds{7500});
  EXPECT_THAT(text, HasSubstr("reason=\"fleet_slot\""));
  EXPECT_THAT(text, HasSubstr("trimd_fleet_slot_held{mount_point=\"/home\",fs_type=\"xfs\","
                              "backend=\"pool-a\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("backend=\"pool-a\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("trimd_fleet_slot_wait_seconds_total 7.5\n"));
}

TEST(Metrics, SayAFilesystemWaitsForACPower) {
  FsStatus waiting = fresh_fs();
  waiting.state = FsState::Waiting;
  waiting.waiting_for = WaitingFor::OnBattery;
  EXPECT_THAT(render_metrics({waiting}, {}, {}),
              HasSubstr("trimd_filesystem_waiting{mount_point=\"/home\",fs_type=\"xfs\","
                        "reason=\"on_battery\",disk=\"\",limit=\"\"} 1\n"));
}

TEST(Metrics, LabelAMountPointThatIsNotUtf8AsTheBusShowsItInValidUtf8) {
  FsStatus latin1 = fresh_fs();
  latin1.mount_point = "/srv/caf\xe9\n";
  FsStatus literal = fresh_fs();
  literal.mount_point = "/srv/caf\\xe9";
  const auto text = render_metrics({latin1, literal}, {});
  EXPECT_TRUE(is_valid_utf8(text));
  // Prometheus escaping over escape_bytes(): "\\" is one backslash.
  EXPECT_THAT(text, HasSubstr("mount_point=\"/srv/caf\\\\xe9\\n\""));
  EXPECT_THAT(text, HasSubstr("mount_point=\"/srv/caf\\\\x5cxe9\""));
}

TEST_F(MetricsFile, IsReplacedWholeWithMode0644AndNoTemporaryFileLeft) {
  const auto file = dir_ / "trimd.prom";
  write_textfile(file, "old\n");
  write_textfile(file, "new\n");
  EXPECT_EQ(read_text(file), "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

// Issue 16 item 2: node_exporter's textfile directory is often writable by
// everyone, and a FIFO at trimd's temp name froze the event loop.
TEST_F(MetricsFile, FifosAtEveryPlausibleTempNameInAWorldWritableDirectoryNeitherBlockNorStopIt) {
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);
  const auto file = dir_ / "trimd.prom";
  const std::string pid = std::to_string(::getpid());
  const std::vector<std::string> names{"trimd.prom." + pid + ".tmp",
                                       ".trimd.prom." + pid + ".tmp",
                                       "trimd.prom.tmp",
                                       ".trimd.prom.tmp",
                                       "trimd.prom.new",
                                       "trimd.prom~",
                                       ".trimd.prom"};
  for (const auto& name : names) ASSERT_EQ(::mkfifo((dir_ / name).c_str(), 0666), 0) << name;
  const auto started = std::chrono::steady_clock::now();
  trimd::test::without_blocking_on((dir_ / names[0]).string(),
                                   [&] { write_textfile(file, "trimd_passes_total 1\n"); });
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - started;
  RecordProperty("write_ms", std::to_string(took.count()));
  EXPECT_EQ(read_text(file), "trimd_passes_total 1\n");
  for (const auto& name : names)
    EXPECT_EQ(fs::status(dir_ / name).type(), fs::file_type::fifo) << name << " left alone";
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()),
            static_cast<std::ptrdiff_t>(names.size() + 1))
      << "no temporary file left";
}

TEST_F(MetricsFile, ThatCannotBeWrittenThrowsAndLeavesNothingBehind) {
  EXPECT_THROW(write_textfile(dir_ / "missing" / "trimd.prom", "x\n"), std::system_error);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

TEST_F(MetricsFile, PassesPromtoolCheckMetrics) {
  const char* promtool = "/usr/bin/promtool";
  if (::access(promtool, X_OK) != 0)
    TRIMD_SKIP_OR_FAIL("promtool is missing (Debian package prometheus)");
  const auto file = dir_ / "trimd.prom";
  write_textfile(file, render_metrics({trimmed_fs(), fresh_fs()}, Lifetime{1 << 30, 3, 2, 1, 1}));
  const std::string command = std::string(promtool) + " check metrics < " + file.string() + " > " +
                              (dir_ / "promtool.out").string() + " 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << read_text(dir_ / "promtool.out");
  EXPECT_EQ(read_text(dir_ / "promtool.out"), "") << "no lint findings";
}
