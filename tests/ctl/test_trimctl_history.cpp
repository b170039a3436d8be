// trimctl history, lifetime figures in trimctl status, and the final line of
// trim --wait that splits a pass's time into trimming and waiting.
#include "trimctl_fixture.hpp"

namespace trimctl_test {
namespace {

class TrimctlHistory : public TrimctlTest {
 protected:
  // /mnt/fast with two remembered passes and lifetime figures.
  static std::vector<FakeFilesystem> remembered() {
    auto filesystems = sample_filesystems();
    FakeFilesystem& fast = filesystems.front();
    const uint64_t start = fast.last_trim_start;
    fast.history = {FakePass{"", start - 7 * 24 * 3600 * kUsecPerSecond,
                             start - 7 * 24 * 3600 * kUsecPerSecond + 60 * kUsecPerSecond,
                             8 * kUsecPerSecond, 52 * kUsecPerSecond, 1ull << 30, "success", 3},
                    FakePass{"", start, fast.last_trim_end, 20 * kUsecPerSecond, 0, kFastLastBytes,
                             "failed: Input/output error", 0}};
    fast.bytes_trimmed_total = 7ull << 30;
    fast.passes_total = 12;
    fast.preemptions_total = 5;
    fast.pauses_total = 3;
    fast.failures_total = 1;
    return filesystems;
  }
};

TEST_F(TrimctlHistory, ListsTheRememberedPassesOfAMountPointOldestFirst) {
  start_fake(Pacing::Immediate, remembered());
  const auto result = trimctl({"history", "/mnt/fast"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 3u) << result.out;
  EXPECT_EQ(lines[0].rfind("MOUNT", 0), 0u) << lines[0];
  EXPECT_NE(lines[1].find("52.0s"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("success"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("failed"), std::string::npos) << lines[2];
}

TEST_F(TrimctlHistory, JsonCarriesEveryFieldOfEveryPass) {
  start_fake(Pacing::Immediate, remembered());
  const auto result = trimctl({"history", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(python_json(result.out, "len(doc['history'])"), "2");
  EXPECT_EQ(python_json(result.out,
                        "[(p['mount_point'], p['wait_usec'], p['preemptions'], p['bytes_trimmed']) "
                        "for p in doc['history']][0]"),
            "('/mnt/fast', 52000000, 3, 1073741824)");
  EXPECT_EQ(python_json(result.out, "sorted(doc['history'][1].keys())"),
            "['bytes_trimmed', 'end_usec', 'mount_point', 'preemptions', 'result', 'start_usec', "
            "'trim_usec', 'wait_usec']");
}

TEST_F(TrimctlHistory, AMountPointTrimdDoesNotRememberFailsWithExitOne) {
  const auto result = trimctl({"history", "/nowhere"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("/nowhere"), std::string::npos) << result.err;
}

TEST_F(TrimctlHistory, StatusShowsLifetimeFiguresAndPerMountOnesWhenNamed) {
  start_fake(Pacing::Immediate, remembered());
  auto result = trimctl({"status"}, trimctl_options());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(lines_of(result.out).at(0).find("12 passes, 1 failed"), std::string::npos)
      << result.out;
  result = trimctl({"status", "/mnt/fast"});
  EXPECT_NE(result.out.find("/mnt/fast: 7 GiB trimmed in 12 passes"), std::string::npos)
      << result.out;
  result = trimctl({"status", "--json"});
  EXPECT_EQ(python_json(result.out, "doc['filesystems'][1]['passes_total']"), "12");
  EXPECT_EQ(python_json(result.out, "doc['manager']['failures_total']"), "1");
}

TEST_F(TrimctlHistory, TrimWaitSplitsThePassIntoTrimmingAndWaiting) {
  auto filesystems = sample_filesystems();
  filesystems.front().next_wait_usec = 8200000;  // of the 12.3 s
  start_fake(Pacing::Immediate, filesystems);
  const auto result = trimctl({"trim", "--wait", "/mnt/fast"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(lines_of(result.out).back(),
            "/mnt/fast: success, 1.2 GiB trimmed in 4.1s (waited 8.2s)");
}

}  // namespace
}  // namespace trimctl_test
