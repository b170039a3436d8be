// Starting a child process: the one fork and exec of every test kit. The
// child never outlives the test process (SIGTERM when it dies), starts with
// no signal blocked, and reads /dev/null unless told otherwise.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace trimd::test {

// What the child gets besides its streams.
struct ChildSetup {
  // false: the test's own environment. true: only PATH (the test's), TZ=UTC
  // and LC_ALL=C, so that nothing else (a bus address, a pager, colours)
  // leaks in and output does not depend on who runs the test.
  bool minimal_environment = false;
  std::map<std::string, std::string> environment;  // set on top of either
  std::string working_directory;                   // "": the test's
};

// The child's standard streams; -1 keeps the test's own (stdin: /dev/null).
struct ChildStreams {
  int out = -1;
  int err = -1;
  int in = -1;
  // `in` is the slave side of a pseudo-terminal: it becomes the controlling
  // terminal of a new session the child leads.
  bool controlling_terminal = false;
};

// Starts argv[0] (searched in PATH). Throws std::system_error when it cannot
// be run (no such program, a working directory that is not there, ...).
pid_t spawn_child(const std::vector<std::string>& argv, ChildStreams streams = {},
                  const ChildSetup& setup = {});

// waitpid's status as a shell's exit code: 128 + signal number when killed.
int exit_code_of(int wait_status);

}  // namespace trimd::test
