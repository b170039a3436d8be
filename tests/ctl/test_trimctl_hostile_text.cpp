// Names trimctl did not write reach a person's terminal escaped: a fleet
// peer's claim (host, mount point), a mount point, device, reason or result
// holding terminal escapes, CR, BEL, DEL, C1 controls and bidi overrides.
// Every human output of the real trimctl is checked byte by byte; --json
// carries the text as trimd sent it.
#include <signal.h>

#include "terminal_safety.hpp"
#include "trimctl_fixture.hpp"

using namespace trimctl_test;
using namespace std::chrono_literals;

namespace {

// Sets the window title, then clears the screen.
const std::string kTitleAndClear = "\x1b]0;pwned\x07\x1b[2J";
// Moves up a line, erases it, writes over it, and reverses what follows.
const std::string kOverwrite = "\x1b[1A\x1b[2K\rFAKE: all good\xe2\x80\xae";
const std::string kHostileMount = "/srv/" + kOverwrite;
// How they must show.
const std::string kTitleAndClearShown = "\\x1b]0;pwned\\x07\\x1b[2J";
const std::string kOverwriteShown = "\\x1b[1A\\x1b[2K\\x0dFAKE: all good\\u202e";
// The same as Python literals, for the --json checks.
const std::string kHostileMountInPython = "'/srv/\\x1b[1A\\x1b[2K\\rFAKE: all good\\u202e'";

// A filesystem whose every name is hostile, waiting for a reason that is too.
FakeFilesystem hostile_filesystem() {
  FakeFilesystem fs = fast_filesystem(realtime_usec());
  fs.id = "hostile";
  fs.mount_point = kHostileMount;
  fs.device = "/dev/" + kTitleAndClear;
  fs.fs_type = "ext4\x7f";
  fs.state = "waiting";
  fs.state_reason =
      "disk sdb is busy\nFAKE: idle\t\xc2\x9b"
      "2J";
  fs.last_result = "failed: \xe2\x81\xa6gnp.exe\xe2\x81\xa9";
  fs.takeover = "not-possible";
  fs.takeover_reason = "\x1b[31mread-only\x1b[0m";
  fs.inline_discard = true;
  fs.discard_mode = "sync";
  fs.next_result = "failed: \x1b]0;pwned\x07";
  fs.history = {FakePass{"", fs.last_trim_start, fs.last_trim_end, 20 * kUsecPerSecond, 0, 0,
                         "success\r\x1b[2K", 0}};
  return fs;
}

class TrimctlHostileText : public TrimctlTest {
 protected:
  void SetUp() override {
    TrimctlTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    start_fake(Pacing::Immediate, {hostile_filesystem()});
  }
};

// A terminal's output less what trimctl itself sends there: its colours
// (ESC [ 0 ; ... m), the live view's cursor-up and clear (ESC [ N A,
// CR ESC [ J), and the CR a terminal puts before each LF.
std::string without_own_sequences(const std::string& out) {
  std::string text;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out.compare(i, 2, "\x1b[") == 0) {
      std::size_t end = i + 2;
      while (end < out.size() &&
             (std::isdigit(static_cast<unsigned char>(out[end])) || out[end] == ';'))
        ++end;
      const bool colour = end < out.size() && out[end] == 'm';
      const bool up = end > i + 2 && end < out.size() && out[end] == 'A';
      const bool clear = end == i + 2 && end < out.size() && out[end] == 'J';
      if (colour || up || clear) {
        i = end;
        continue;
      }
    }
    if (out[i] == '\r' &&
        ((i + 1 < out.size() && out[i + 1] == '\n') || out.compare(i + 1, 3, "\x1b[J") == 0))
      continue;
    text += out[i];
  }
  return text;
}

TEST_F(TrimctlHostileText, StatusEscapesEveryFieldInTheTableAndTheNotes) {
  const auto status = trimctl({"status"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(first_unsafe_in(status.out), "") << status.out;
  EXPECT_NE(status.out.find(kOverwriteShown), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("/dev/" + kTitleAndClearShown), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("disk sdb is busy\\x0aFAKE: idle\\x09\\xc2\\x9b2J"), std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("\\x1b[31mread-only\\x1b[0m"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("\\u2066gnp.exe\\u2069"), std::string::npos) << status.out;
  // No field's CR or line feed started a line of its own.
  for (const auto& line : lines_of(status.out)) EXPECT_NE(line.rfind("FAKE", 0), 0u) << line;
}

TEST_F(TrimctlHostileText, StatusOnAColourTerminalSendsOnlyItsOwnColours) {
  ChildOptions options = trimctl_options();
  options.terminal = true;
  options.environment["SYSTEMD_PAGER"] = "cat";
  options.environment["COLUMNS"] = "60";  // ellipsized cells too
  const auto result = trimctl({"status"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.out;
  ASSERT_NE(result.out.find("\x1b[0;"), std::string::npos) << "no colours: " << result.out;
  EXPECT_EQ(first_unsafe_in(without_own_sequences(result.out)), "") << result.out;
}

TEST_F(TrimctlHostileText, StatusJsonCarriesTheRawText) {
  const auto result = trimctl({"status", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(
      python_json(result.out, "doc['filesystems'][0]['mount_point'] == " + kHostileMountInPython),
      "True");
  EXPECT_EQ(python_json(result.out,
                        "doc['filesystems'][0]['state_reason'] == "
                        "'disk sdb is busy\\nFAKE: idle\\t\\x9b2J'"),
            "True");
}

TEST_F(TrimctlHostileText, FleetEscapesAPeersHostAndMountPointAndKeepsThemRawInJson) {
  fake_->set_fleet({{"pool-a", 1, 1, kTitleAndClear, kHostileMount, true, false, ""},
                    {"pool-a\x1b[8m", 1, 2, "here", "/mnt/fast", false, true, ""}});
  const auto result = trimctl({"fleet"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(first_unsafe_in(result.out), "") << result.out;
  EXPECT_NE(result.out.find(kTitleAndClearShown), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(kOverwriteShown), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("pool-a\\x1b[8m: 1/1 slots held, 1 waiting (1 not listed)"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(lines_of(result.out).size(), 5u) << result.out;  // header, 2 rows, 2 summaries
  for (const auto& line : lines_of(result.out)) EXPECT_NE(line.rfind("FAKE", 0), 0u) << line;

  const auto json = trimctl({"fleet", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(python_json(json.out, "doc['claims'][0]['host'] == '\\x1b]0;pwned\\x07\\x1b[2J'"),
            "True");
  EXPECT_EQ(python_json(json.out, "doc['claims'][0]['mount_point'] == " + kHostileMountInPython),
            "True");
}

TEST_F(TrimctlHostileText, HistoryEscapesMountPointsAndResults) {
  const auto result = trimctl({"history"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(first_unsafe_in(result.out), "") << result.out;
  EXPECT_NE(result.out.find(kOverwriteShown), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("success\\x0d\\x1b[2K"), std::string::npos) << result.out;
  EXPECT_EQ(lines_of(result.out).size(), 2u) << result.out;
}

TEST_F(TrimctlHostileText, MonitorEscapesSubjectsPropertiesAndResults) {
  const uint64_t reads_before = fake_->property_reads();
  ChildProcess child(trimctl_argv({"monitor"}), trimctl_options());
  ASSERT_TRUE(wait_for_reads(reads_before, 10s));
  FakeFilesystem added = hostile_filesystem();
  added.id = "added";
  added.mount_point = "/srv/" + kTitleAndClear;
  fake_->add_filesystem(added);
  ASSERT_EQ(trimctl({"trim"}).exit_code, 0);
  ASSERT_TRUE(child.wait_for_output("TrimFinished", 10s)) << child.output();
  child.send_signal(SIGINT);
  const auto result = child.finish(10s);

  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(first_unsafe_in(result.out), "") << result.out;
  EXPECT_NE(result.out.find(kOverwriteShown + ": TrimStarted"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("/srv/" + kTitleAndClearShown + ": InterfacesAdded ext4\\x7f on /dev/" +
                            kTitleAndClearShown),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("LastResult=failed: \\x1b]0;pwned\\x07"), std::string::npos)
      << result.out;
}

TEST_F(TrimctlHostileText, TrimWaitEscapesProgressLinesAndResultsInAPipe) {
  const auto result = trimctl({"trim", "--wait"});
  EXPECT_EQ(result.exit_code, 1) << result.err;  // the pass fails
  EXPECT_EQ(first_unsafe_in(result.out), "") << result.out;
  EXPECT_NE(result.out.find(kOverwriteShown + ": 50%"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(kOverwriteShown + ": failed: \\x1b]0;pwned\\x07, "), std::string::npos)
      << result.out;
}

TEST_F(TrimctlHostileText, TrimWaitOnATerminalSendsOnlyItsOwnCursorMoves) {
  start_fake(Pacing::Paced, {hostile_filesystem()});
  ChildOptions options = trimctl_options();
  options.terminal = true;
  ChildProcess child(trimctl_argv({"trim", "--wait"}), options);
  const auto result = child.finish(30s);
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_EQ(first_unsafe_in(without_own_sequences(result.out)), "") << result.out;
  EXPECT_NE(result.out.find(kOverwriteShown + "  ["), std::string::npos) << result.out;
}

TEST_F(TrimctlHostileText, ErrorsQuotingAMountPointEscapeIt) {
  const auto result = trimctl({"pause", "/srv/" + kTitleAndClear});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(first_unsafe_in(result.err), "") << result.err;
  EXPECT_NE(result.err.find("/srv/" + kTitleAndClearShown), std::string::npos) << result.err;
}

}  // namespace
