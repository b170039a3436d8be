// What every bus test needs: a private dbus-daemon shaped like the system
// bus, child processes that never outlive the test, and commands run as
// another user. Under CI=true a missing tool fails the test, never skips it.
#pragma once

#include <sys/types.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"  // run_command, program_in_path, running_under_ci
#include "require_program.hpp"
#include "temp_dir.hpp"

namespace trimd::test {

// A child process that is killed with the test: SIGTERM from the destructor,
// and PR_SET_PDEATHSIG in case the test process dies first.
class ChildProcess {
 public:
  // stdout goes to a pipe (read_line), stderr to `log_path` (or is kept).
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path = "");
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // One line of its stdout, or nothing after `timeout` or at end of file.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // True while it has not exited.
  bool running();
  // SIGTERM, then SIGKILL after `grace`; returns the wait status.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds{3000});

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffered_;
  std::optional<int> status_;
};

// The same command as uid/gid 65534 (nobody), through setpriv.
std::vector<std::string> as_nobody(std::vector<std::string> argv);

// A dbus-daemon on a unix socket in a world-accessible temporary directory,
// with the test config (system-bus defaults plus trimd's own policy file).
class PrivateBus {
 public:
  PrivateBus();
  const std::string& address() const { return address_; }
  // "busctl --address=<this bus>" and then `args`.
  std::vector<std::string> busctl(std::vector<std::string> args) const;
  // "dbus-send --bus=<this bus> --print-reply" and then `args`: it prints
  // error names, which busctl does not.
  std::vector<std::string> dbus_send(std::vector<std::string> args) const;

 private:
  TempDir dir_;
  std::optional<ChildProcess> daemon_;
  std::string address_;
};

}  // namespace trimd::test
