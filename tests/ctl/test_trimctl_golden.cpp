// trimctl's --json output, byte for byte, against files captured from it
// (tests/ctl/golden/): scripts may compare or grep it, so a change of JSON
// library or of field order must not change a byte. TRIMCTL_WRITE_GOLDEN=1
// rewrites the files instead (review the diff before committing it).
#include <csignal>
#include <fstream>
#include <sstream>

#include "trimctl_fixture.hpp"

namespace trimctl_test {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kDay = 24 * 3600 * kUsecPerSecond;
constexpr uint64_t kEpoch = 1764633600 * kUsecPerSecond;  // 2025-12-02 00:00:00 UTC

// The sample filesystems at fixed times, a pass under way with a progress
// that is no short decimal, and a mount point with characters JSON escapes.
std::vector<FakeFilesystem> fixed_filesystems() {
  std::vector<FakeFilesystem> filesystems{fast_filesystem(kEpoch), data_filesystem(kEpoch)};
  FakeFilesystem& fast = filesystems.front();
  fast.history = {FakePass{"", kEpoch - 7 * kDay, kEpoch - 7 * kDay + 60 * kUsecPerSecond,
                           8 * kUsecPerSecond, 52 * kUsecPerSecond, 1ull << 30, "success", 3}};
  fast.bytes_trimmed_total = 7ull << 30;
  fast.passes_total = 12;
  fast.preemptions_total = 5;
  fast.pauses_total = 3;
  fast.failures_total = 1;

  FakeFilesystem odd;
  odd.id = "odd";
  odd.mount_point = "/srv/\"quoted\" back\\slash\ttab\x01 caf\xc3\xa9";
  odd.device = "/dev/mapper/vg-odd";
  odd.fs_type = "btrfs";
  odd.backing_disks = {"sdc", "sdd"};
  odd.state = "trimming";
  odd.progress = 1.0 / 3.0;
  odd.size = 3ull << 40;
  odd.next_trim = kEpoch + kDay;
  filesystems.push_back(odd);
  return filesystems;
}

std::string golden_path(const std::string& name) { return TRIMCTL_GOLDEN_DIR "/" + name; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Monitor lines carry the time they were printed: that one field is zeroed.
std::string without_times(std::string text) {
  const std::string key = "\"time_usec\":";
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    std::size_t end = at + key.size();
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    text.replace(at + key.size(), end - at - key.size(), "0");
  }
  return text;
}

class TrimctlGolden : public TrimctlTest {
 protected:
  void SetUp() override {
    TrimctlTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    start_fake(Pacing::Immediate, fixed_filesystems());
  }

  void expect_golden(const std::string& name, const std::string& output) {
    if (const char* write = std::getenv("TRIMCTL_WRITE_GOLDEN");
        write && std::string(write) == "1") {
      std::ofstream(golden_path(name), std::ios::binary) << output;
      return;
    }
    EXPECT_EQ(output, read_file(golden_path(name))) << "differs from " << golden_path(name);
  }

  void expect_command_golden(const std::vector<std::string>& arguments, const std::string& name) {
    const auto result = trimctl(arguments);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    expect_golden(name, result.out);
  }
};

TEST_F(TrimctlGolden, StatusJsonShortIsByteForByteWhatItWas) {
  expect_command_golden({"status", "--json"}, "status.json");
  expect_command_golden({"status", "--json=short"}, "status.json");
}

TEST_F(TrimctlGolden, StatusJsonPrettyIsByteForByteWhatItWas) {
  expect_command_golden({"status", "--json=pretty"}, "status.pretty.json");
}

TEST_F(TrimctlGolden, HistoryJsonIsByteForByteWhatItWas) {
  expect_command_golden({"history", "--json"}, "history.json");
  expect_command_golden({"history", "--json=pretty"}, "history.pretty.json");
}

TEST_F(TrimctlGolden, TrimWaitJsonIsByteForByteWhatItWas) {
  const auto result = trimctl({"trim", "--wait", "--json", "/mnt/fast", "/data"});
  EXPECT_EQ(result.exit_code, 1) << result.err;  // /data's pass fails
  expect_golden("trim.json", result.out);
}

TEST_F(TrimctlGolden, MonitorJsonLinesAreByteForByteWhatTheyWereButForTheTime) {
  const uint64_t reads_before = fake_->property_reads();
  ChildProcess child(trimctl_argv({"monitor", "--json"}), trimctl_options());
  ASSERT_TRUE(wait_for_reads(reads_before, 10s));
  fake_->set_progress("/mnt/fast", 0.25);
  fake_->set_progress("/mnt/fast", 1.0 / 3.0);
  fake_->set_progress("/mnt/fast", 1);
  FakeFilesystem added = fixed_filesystems().back();
  added.id = "added";
  added.mount_point = "/srv/new";
  fake_->add_filesystem(added);
  fake_->remove_filesystem("/data");
  ASSERT_TRUE(child.wait_for_output("InterfacesRemoved", 10s)) << child.output();
  child.send_signal(SIGTERM);
  const auto result = child.finish(10s);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  expect_golden("monitor.jsonl", without_times(result.out));
}

}  // namespace
}  // namespace trimctl_test
