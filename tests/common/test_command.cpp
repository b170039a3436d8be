// The test kits' one way to run a program: output, exit codes, timeouts,
// programs that are not there, children that die with the test, their
// environment, terminal and lines, and how they are stopped.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include "command.hpp"
#include "temp_dir.hpp"
#include "wait_until.hpp"

namespace trimd::test {
namespace {

using namespace std::chrono_literals;

// Neither gone nor a zombie waiting for whoever inherited it to reap it.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, command, state;
  stat >> pid_field >> command >> state;  // sleep's name has no space
  return stat && state != "Z";
}

TEST(RunCommand, CapturesOutputErrorsAndTheExitCode) {
  const CommandResult result = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(result.out, "out\n");
  EXPECT_EQ(result.err, "err\n");
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_FALSE(result.ok());
}

TEST(RunCommand, KillsACommandThatOutlivesItsTimeout) {
  const CommandResult result = run_command({"sleep", "30"}, 200ms);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
}

TEST(RunCommand, ReportsAProgramThatDoesNotExist) {
  const CommandResult result = run_command({"trimd-no-such-program"});
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_NE(result.err.find("trimd-no-such-program"), std::string::npos);
}

TEST(RunCommand, GivesTheCommandAnEmptyStdin) {
  const CommandResult result = run_command({"cat"}, 10s);
  EXPECT_TRUE(result.ok()) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST(RunCommand, GivesAMinimalEnvironmentOnlyWhatItNames) {
  ::setenv("TRIMD_TEST_LEAK", "leaked", 1);
  ChildOptions options;
  options.minimal_environment = true;
  options.environment["EXTRA"] = "given";
  const CommandResult minimal = run_command({"env"}, options, 10s);
  ::unsetenv("TRIMD_TEST_LEAK");
  ASSERT_TRUE(minimal.ok()) << minimal.err;
  EXPECT_EQ(minimal.out.find("TRIMD_TEST_LEAK"), std::string::npos) << minimal.out;
  for (const char* line : {"TZ=UTC\n", "LC_ALL=C\n", "EXTRA=given\n", "PATH="})
    EXPECT_NE(minimal.out.find(line), std::string::npos) << line << " in " << minimal.out;
}

TEST(RunCommand, InheritsTheTestsEnvironmentUnlessToldOtherwise) {
  ::setenv("TRIMD_TEST_INHERITED", "yes", 1);
  const CommandResult result = run_command({"sh", "-c", "echo $TRIMD_TEST_INHERITED"}, 10s);
  ::unsetenv("TRIMD_TEST_INHERITED");
  EXPECT_EQ(result.out, "yes\n");
}

TEST(RunCommand, RunsInTheWorkingDirectoryItIsGiven) {
  TempDir dir("trimd-command-");
  ChildOptions options;
  options.working_directory = dir.path().string();
  const CommandResult result = run_command({"pwd", "-P"}, options, 10s);
  EXPECT_EQ(result.out, std::filesystem::canonical(dir.path()).string() + "\n");
  options.working_directory = (dir.path() / "missing").string();
  EXPECT_EQ(run_command({"pwd"}, options, 10s).exit_code, 127);
}

TEST(RunCommand, GivesATerminalWhenAsked) {
  ChildOptions options;
  options.terminal = true;
  const CommandResult result =
      run_command({"sh", "-c", "test -t 0 && test -t 1 && test -t 2 && stty size"}, options, 10s);
  EXPECT_EQ(result.exit_code, 0) << result.out;
  EXPECT_NE(result.out.find("30 100"), std::string::npos) << result.out;
}

TEST(ChildProcess, ReadsItsOutputLineByLine) {
  ChildProcess child({"sh", "-c", "echo one; echo two; exec sleep 30"});
  EXPECT_EQ(child.read_line(10s), "one");
  EXPECT_EQ(child.read_line(10s), "two");
  EXPECT_EQ(child.read_line(50ms), std::nullopt);  // nothing more yet
  EXPECT_TRUE(child.wait_for_output("two", 10s));
  EXPECT_TRUE(child.running());
  EXPECT_EQ(child.stop(), 128 + SIGTERM);
}

TEST(ChildProcess, IsKilledWhenItIgnoresSigterm) {
  ChildProcess child({"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"});
  ASSERT_EQ(child.read_line(10s), "ready");
  EXPECT_EQ(child.stop(100ms), 128 + SIGKILL);
  EXPECT_FALSE(child.running());
}

TEST(ChildProcess, AppendsStderrToTheFileItIsGiven) {
  TempDir dir("trimd-command-");
  const auto log = dir.path() / "child.log";
  std::ofstream(log) << "before\n";
  ChildOptions options;
  options.stderr_path = log.string();
  ChildProcess child({"sh", "-c", "echo out; echo err >&2"}, options);
  const CommandResult result = child.finish(10s);
  EXPECT_EQ(result.out, "out\n");
  EXPECT_EQ(result.err, "");
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "before\nerr\n");
}

TEST(SpawnChild, ThrowsWhenTheProgramCannotBeRun) {
  EXPECT_THROW(spawn_child({"trimd-no-such-program"}), std::system_error);
}

// A child of a test process that dies is not left behind: the test's
// process here is a forked stand-in that starts `sleep` and is killed.
TEST(SpawnChild, StartsAChildThatDiesWithTheTestProcess) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t stand_in = ::fork();
  ASSERT_GE(stand_in, 0);
  if (stand_in == 0) {
    const pid_t child = spawn_child({"sleep", "30"});
    [[maybe_unused]] const auto n = ::write(pipe_fds[1], &child, sizeof child);
    ::pause();
    ::_exit(0);
  }
  pid_t child = -1;
  ASSERT_EQ(::read(pipe_fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ASSERT_EQ(::kill(child, 0), 0) << "the child did not start";
  ::kill(stand_in, SIGKILL);
  ::waitpid(stand_in, nullptr, 0);
  EXPECT_TRUE(wait_until([&] { return !alive(child); }, 5s));
}

}  // namespace
}  // namespace trimd::test
