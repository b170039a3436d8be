// Runs a program (the real trimctl) as a child with a clean environment,
// collecting its output; on a pipe, or on a pseudo-terminal when asked.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace trimctl_test {

struct ChildResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;     // on a terminal, out holds stdout and stderr both
  std::string err;
  bool timed_out = false;
};

struct ChildOptions {
  // Added to a minimal environment (PATH, TZ=UTC); no bus address leaks in.
  std::map<std::string, std::string> environment;
  std::string working_directory;
  bool terminal = false;
};

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options);
  ~ChildProcess();  // kills the child if it still runs
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Reads output until stdout holds `needle`; false when the time is up or
  // the child closed its output first.
  bool wait_for_output(const std::string& needle, std::chrono::milliseconds timeout);
  void send_signal(int signal);
  // Reads to the end and reaps the child, killing it after `timeout`.
  ChildResult finish(std::chrono::milliseconds timeout);

  const std::string& output() const { return result_.out; }

 private:
  // One poll round over the open outputs; false when all are closed.
  bool read_some(int timeout_ms);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  ChildResult result_;
};

// Runs to completion (at most 30 s) and returns what happened.
ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options = {});

}  // namespace trimctl_test
