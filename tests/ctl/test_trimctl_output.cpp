// trimctl's systemd habits: the table fitted to the terminal, --full,
// --no-legend, --json=MODE, colours by tty/NO_COLOR/SYSTEMD_COLORS, -q,
// and the polkit agent for a person at a terminal.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "as_nobody.hpp"
#include "trimctl_fixture.hpp"

using namespace trimctl_test;
using namespace std::chrono_literals;

namespace {

const std::string kLongMount = "/srv/backups/nightly-snapshots/archive-2026";
const std::string kColorEscape = "\x1b[";

class TrimctlOutput : public TrimctlTest {
 protected:
  void SetUp() override {
    TrimctlTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    FakeFilesystem archive = fast_filesystem(realtime_usec());
    archive.id = "archive";
    archive.mount_point = kLongMount;
    archive.device = "/dev/mapper/vg0-archive";
    fake_->add_filesystem(archive);
  }

  CommandResult status_with(const std::map<std::string, std::string>& environment,
                            const std::vector<std::string>& extra = {}, bool terminal = false) {
    ChildOptions options = trimctl_options();
    // "cat" is no pager: the table itself reaches the test's terminal.
    options.environment["SYSTEMD_PAGER"] = "cat";
    for (const auto& [name, value] : environment) options.environment[name] = value;
    options.terminal = terminal;
    std::vector<std::string> arguments{"status"};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    auto result = trimctl(arguments, options);
    // A terminal ends lines with CR LF.
    result.out.erase(std::remove(result.out.begin(), result.out.end(), '\r'), result.out.end());
    return result;
  }
};

std::size_t cells(const std::string& line) {
  return static_cast<std::size_t>(std::count_if(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// The table: the header line and the rows after it, up to the blank line.
std::vector<std::string> table_lines(const std::string& out) {
  std::vector<std::string> table;
  bool in_table = false;
  for (const auto& line : lines_of(out)) {
    if (line.rfind("MOUNT", 0) == 0) in_table = true;
    if (in_table && line.empty()) break;
    if (in_table) table.push_back(line);
  }
  return table;
}

void expect_fits(const std::string& out, std::size_t columns) {
  const auto table = table_lines(out);
  ASSERT_EQ(table.size(), 4u) << out;
  for (const auto& line : table) EXPECT_LE(cells(line), columns) << line;
}

TEST_F(TrimctlOutput, StatusFitsEightyColumnsByShorteningTheLongMountPointInTheMiddle) {
  const auto result = status_with({{"COLUMNS", "80"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expect_fits(result.out, 80);
  const std::string row = line_with(result.out, "/srv/");
  ASSERT_NE(row, "") << result.out;
  const std::string mount = row.substr(0, row.find(' '));
  EXPECT_NE(mount.find("…"), std::string::npos) << row;
  EXPECT_EQ(mount.rfind("/srv/", 0), 0u) << row;
  EXPECT_EQ(mount.substr(mount.size() - 4), "2026") << row;
  // Timestamps give way to their age first.
  EXPECT_NE(line_with(result.out, "/mnt/fast").find(" 3 days ago "), std::string::npos)
      << result.out;
}

TEST_F(TrimctlOutput, StatusAtOneHundredTwentyColumnsShowsEveryMountPointWhole) {
  const auto result = status_with({{"COLUMNS", "120"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  expect_fits(result.out, 120);
  EXPECT_NE(line_with(result.out, kLongMount), "") << result.out;
  EXPECT_EQ(result.out.find("…"), std::string::npos) << result.out;
}

TEST_F(TrimctlOutput, StatusTakesTheWidthOfTheTerminalItRunsOn) {
  // The test terminal is 100 columns wide.
  const auto result = status_with({{"NO_COLOR", "1"}}, {}, true);
  ASSERT_EQ(result.exit_code, 0) << result.out;
  expect_fits(result.out, 100);
}

TEST_F(TrimctlOutput, FullKeepsEveryCellWholeWhateverTheWidth) {
  const auto result = status_with({{"COLUMNS", "80"}}, {"--full"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(line_with(result.out, kLongMount), "") << result.out;
  EXPECT_NE(line_with(result.out, "/mnt/fast").find("UTC; 3 days ago"), std::string::npos);
  EXPECT_EQ(result.out.find("…"), std::string::npos) << result.out;
}

TEST_F(TrimctlOutput, NoLegendPrintsTheRowsOnly) {
  const auto result = status_with({}, {"--no-legend"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = lines_of(result.out);
  ASSERT_EQ(lines.size(), 3u) << result.out;
  EXPECT_EQ(lines[0].rfind("/data ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("/mnt/fast ", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind(kLongMount + " ", 0), 0u) << lines[2];
}

TEST_F(TrimctlOutput, JsonPrettyIsIndentedJsonWithTheSameContentAsShort) {
  const auto pretty = status_with({}, {"--json=pretty"});
  ASSERT_EQ(pretty.exit_code, 0) << pretty.err;
  EXPECT_GT(lines_of(pretty.out).size(), 20u);
  EXPECT_NE(pretty.out.find("\n  \"filesystems\": ["), std::string::npos) << pretty.out;
  const std::string whole = "json.dumps(json.loads(text), sort_keys=True)";
  const auto shorter = status_with({}, {"--json=short"});
  const auto plain = status_with({}, {"--json"});
  EXPECT_EQ(lines_of(shorter.out).size(), 1u);
  EXPECT_EQ(python_json(pretty.out, whole), python_json(plain.out, whole));
  EXPECT_EQ(python_json(pretty.out, whole), python_json(shorter.out, whole));
  EXPECT_EQ(python_json(pretty.out, "json.loads(text)['filesystems'][2]['mount_point']"),
            kLongMount);
}

TEST_F(TrimctlOutput, JsonOffIsTheTableAndAnUnknownModeIsAUsageError) {
  EXPECT_NE(line_with(status_with({}, {"--json=off"}).out, "MOUNT"), "");
  const auto bad = status_with({}, {"--json=yaml"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--json takes short, pretty or off"), std::string::npos) << bad.err;
}

TEST_F(TrimctlOutput, ColoursOnATerminalButNotInAPipe) {
  EXPECT_NE(status_with({}, {}, true).out.find(kColorEscape), std::string::npos);
  EXPECT_EQ(status_with({}).out.find(kColorEscape), std::string::npos);
}

TEST_F(TrimctlOutput, NoColorAndSystemdColorsOffKeepATerminalPlain) {
  for (const auto& environment :
       std::vector<std::map<std::string, std::string>>{{{"NO_COLOR", "1"}},
                                                       {{"SYSTEMD_COLORS", "0"}},
                                                       {{"SYSTEMD_COLORS", "false"}},
                                                       {{"SYSTEMD_COLORS", "no"}},
                                                       {{"TERM", "dumb"}}}) {
    const auto result = status_with(environment, {}, true);
    ASSERT_EQ(result.exit_code, 0) << result.out;
    EXPECT_EQ(result.out.find(kColorEscape), std::string::npos) << environment.begin()->first;
    EXPECT_NE(line_with(result.out, "/mnt/fast"), "");
  }
}

TEST_F(TrimctlOutput, SystemdColorsOnColoursEvenAPipeAndOverridesNoColor) {
  for (const auto& environment : std::vector<std::map<std::string, std::string>>{
           {{"SYSTEMD_COLORS", "1"}},
           {{"SYSTEMD_COLORS", "yes"}},
           {{"SYSTEMD_COLORS", "256"}},
           {{"SYSTEMD_COLORS", "16"}, {"NO_COLOR", "1"}}}) {
    const auto result = status_with(environment);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find(kColorEscape), std::string::npos) << environment.begin()->second;
  }
}

TEST_F(TrimctlOutput, QuietPrintsNothingAndTheExitStatusTells) {
  const auto status = trimctl({"-q", "status"});
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_EQ(status.out, "");
  const auto failed = trimctl({"trim", "--wait", "--quiet", "/data"});
  EXPECT_EQ(failed.exit_code, 1);  // /data's pass fails
  EXPECT_EQ(failed.out, "");
  const auto succeeded = trimctl({"trim", "--wait", "-q", "/mnt/fast"});
  EXPECT_EQ(succeeded.exit_code, 0);
  EXPECT_EQ(succeeded.out, "");
  fake_.reset();
  const auto unreachable = trimctl({"-q", "status"});
  EXPECT_EQ(unreachable.exit_code, 3);
  EXPECT_NE(unreachable.err.find("cannot reach trimd"), std::string::npos);  // errors still say why
}

TEST_F(TrimctlOutput, PagesStatusOnATerminalThroughSystemdPagerWithLessOptions) {
  const auto result =
      status_with({{"SYSTEMD_PAGER", "echo LESS=$LESS; sed 's/^/paged: /'"}}, {}, true);
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const auto lines = lines_of(result.out);
  ASSERT_GE(lines.size(), 6u) << result.out;
  EXPECT_EQ(lines[0], "LESS=FRSXMK");
  for (std::size_t i = 1; i < lines.size(); ++i)
    EXPECT_EQ(lines[i].rfind("paged: ", 0), 0u) << lines[i];
  EXPECT_NE(line_with(result.out, "paged: /mnt/fast "), "");  // all of it, before trimctl exits
}

TEST_F(TrimctlOutput, PagesThroughPagerWhenSystemdPagerIsUnset) {
  ChildOptions options = trimctl_options();
  options.terminal = true;
  options.environment["PAGER"] = "sed 's/^/paged: /'";
  options.environment["NO_COLOR"] = "1";
  const auto result = trimctl({"status"}, options);
  EXPECT_NE(result.out.find("paged: MOUNT"), std::string::npos) << result.out;
}

TEST_F(TrimctlOutput, DoesNotPageWithNoPagerOrInAPipe) {
  const std::map<std::string, std::string> pager{{"SYSTEMD_PAGER", "sed 's/^/paged: /'"}};
  const auto no_pager = status_with(pager, {"--no-pager"}, true);
  const auto pipe = status_with(pager);
  for (const auto* result : {&no_pager, &pipe}) {
    EXPECT_EQ(result->exit_code, 0);
    EXPECT_EQ(result->out.find("paged:"), std::string::npos) << result->out;
    EXPECT_NE(line_with(result->out, "/mnt/fast "), "");
  }
}

// A pkttyagent stand-in: logs its arguments, takes a while to "register",
// then says it is ready by closing the notify fd, and waits to be stopped.
class PolkitAgentDirectory {
 public:
  PolkitAgentDirectory() {
    char pattern[] = "/tmp/trimctl-agent.XXXXXX";
    if (!mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
    chmod(path_.c_str(), 0777);  // the agent runs as the unprivileged caller
    std::ofstream(path_ + "/pkttyagent") << "#!/bin/sh\n"
                                            "log=\"$(dirname \"$0\")/agent.log\"\n"
                                            "echo \"$*\" > \"$log\"\n"
                                            "sleep 0.5\n"
                                            "echo registered >> \"$log\"\n"
                                            "eval \"exec $4>&-\"\n"
                                            "exec sleep 60\n";
    chmod((path_ + "/pkttyagent").c_str(), 0755);
  }
  ~PolkitAgentDirectory() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string log() const {
    std::ifstream in(path_ + "/agent.log");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string path_;
};

// trimctl as a user who is not root: root needs no agent.
std::vector<std::string> as_unprivileged(std::vector<std::string> argv) {
  return geteuid() == 0 ? trimd::test::as_nobody(std::move(argv)) : argv;
}

TEST_F(TrimctlOutput, StartsAPolkitAgentOnATerminalAndWaitsUntilItIsReady) {
  if (geteuid() == 0) TRIMD_REQUIRE_PROGRAM("setpriv");
  PolkitAgentDirectory agent;
  ChildOptions options = trimctl_options();
  options.terminal = true;
  options.environment["PATH"] = agent.path() + ":/usr/bin:/bin";
  // Nobody on this bus: the command fails after the agent is up.
  const std::string nowhere = "unix:path=" + agent.path() + "/no-bus";
  const auto result =
      run_child(as_unprivileged({TRIMCTL_BINARY, "--address", nowhere, "pause"}), options);
  EXPECT_EQ(result.exit_code, 3) << result.out;
  const auto log = lines_of(agent.log());
  ASSERT_EQ(log.size(), 2u) << agent.log() << result.out;
  EXPECT_TRUE(contains_shape(log[0], "--process 9")) << log[0];
  EXPECT_NE(log[0].find(" --notify-fd "), std::string::npos) << log[0];
  EXPECT_NE(log[0].find(" --fallback"), std::string::npos) << log[0];
  EXPECT_EQ(log[1], "registered");  // trimctl did not go on (and stop it) before
}

TEST_F(TrimctlOutput, StartsNoPolkitAgentWithoutATerminalOrWithNoAskPassword) {
  PolkitAgentDirectory agent;
  const std::string nowhere = "unix:path=" + agent.path() + "/no-bus";
  ChildOptions pipe = trimctl_options();
  pipe.environment["PATH"] = agent.path() + ":/usr/bin:/bin";
  ChildOptions terminal = pipe;
  terminal.terminal = true;
  EXPECT_EQ(
      run_child(as_unprivileged({TRIMCTL_BINARY, "--address", nowhere, "pause"}), pipe).exit_code,
      3);
  EXPECT_EQ(run_child(as_unprivileged(
                          {TRIMCTL_BINARY, "--address", nowhere, "--no-ask-password", "pause"}),
                      terminal)
                .exit_code,
            3);
  EXPECT_EQ(run_child(as_unprivileged({TRIMCTL_BINARY, "--address", nowhere, "status"}), terminal)
                .exit_code,
            3);
  EXPECT_EQ(agent.log(), "");
}

}  // namespace
