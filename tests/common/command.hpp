// Running programs from a test, one way for every test kit (the system and
// the bus kits both link it, and a test may link both): a child that never
// outlives the test process, its output captured, killed after a timeout;
// and the CI rule that a missing program fails instead of skipping.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace trimd::test {

struct CommandResult {
  int exit_code = -1;  // 128 + signal number when killed, as the shell says
  bool timed_out = false;
  std::string out;
  std::string err;
  bool ok() const { return exit_code == 0 && !timed_out; }
};

// Runs argv[0] (searched in PATH) with stdin from /dev/null, capturing
// stdout and stderr; it is killed after `timeout`. A program that cannot be
// run gives exit code 127 and says why in `err`.
CommandResult run_command(const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout = std::chrono::seconds(120));

// The same, throwing std::runtime_error with the command's stderr unless it succeeds.
std::string run_or_throw(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(120));

// Where a started child's stdout and stderr go; -1 keeps the test's own.
struct ChildOutput {
  int out = -1;
  int err = -1;
};

// Starts argv[0] (searched in PATH) with stdin from /dev/null and no signal
// blocked. It gets SIGTERM when the test process dies. Throws
// std::system_error when it cannot be run (no such program, ...).
pid_t spawn_child(const std::vector<std::string>& argv, ChildOutput output = {});

// waitpid's status as a shell's exit code: 128 + signal number when killed.
int exit_code_of(int wait_status);

bool running_under_ci();  // env CI=true: a missing capability fails instead of skipping
bool program_in_path(const std::string& name);

}  // namespace trimd::test
