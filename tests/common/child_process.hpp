// A child process for a test: started with spawn_child (so it dies with the
// test), its output read as it comes or to the end, stopped with SIGTERM
// (then SIGKILL) when the test is done with it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "spawn.hpp"

namespace trimd::test {

struct CommandResult {
  int exit_code = -1;  // 128 + signal number when killed, as the shell says
  bool timed_out = false;
  std::string out;  // on a terminal: stdout and stderr both
  std::string err;
  bool ok() const { return exit_code == 0 && !timed_out; }
};

struct ChildOptions : ChildSetup {
  // stdin, stdout and stderr on a pseudo-terminal of 100 columns and 30 rows.
  bool terminal = false;
  // Where stderr goes: "" captured (CommandResult::err), else appended to this file.
  std::string stderr_path;
};

// Options with stderr appended to `path` (a daemon's log), the rest as they are.
inline ChildOptions stderr_to(const std::string& path) {
  ChildOptions options;
  options.stderr_path = path;
  return options;
}

class ChildProcess {
 public:
  // Throws std::system_error when argv[0] cannot be run.
  explicit ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options = {});
  ~ChildProcess();  // stop()
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The next line of its stdout (without the newline), or nothing after
  // `timeout` or at the end of its output.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // Reads until stdout holds `needle`: false when the time is up or the
  // child closed its output first.
  bool wait_for_output(const std::string& needle, std::chrono::milliseconds timeout);
  const std::string& output() const { return result_.out; }  // all of stdout read so far

  void send_signal(int signal);
  bool running();  // it has not exited (reaps it when it has)
  // SIGTERM, then SIGKILL after `grace`; its exit code (128 + signal when killed).
  int stop(std::chrono::milliseconds grace = std::chrono::seconds{3});
  // Reads its output to the end and reaps it, killing it after `timeout`.
  CommandResult finish(std::chrono::milliseconds timeout);

 private:
  // One poll round over the open outputs (at most `timeout`); false once all are closed.
  bool read_some(std::chrono::milliseconds timeout);
  void reap(int flags);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::size_t line_start_ = 0;  // read_line's place in result_.out
  std::optional<int> status_;   // waitpid's, once reaped
  CommandResult result_;
};

}  // namespace trimd::test
