// The test kits' one way to run a program: output, exit codes, timeouts,
// programs that are not there, and children that die with the test.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <system_error>

#include "command.hpp"
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
