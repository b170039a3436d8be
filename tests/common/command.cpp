// Children of a test: started with fork and exec (so that they can be tied to
// the test's life), their output drained by poll.
#include "command.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "posix_util.hpp"

namespace trimd::test {

using namespace std::chrono_literals;

namespace {

struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe2");
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    close_fd(read);
    close_fd(write);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
};

// Between fork and exec only async-signal-safe calls: everything the child
// needs is prepared before the fork. An exec that fails sends its errno
// through `report` (close-on-exec, so a successful exec sends nothing).
[[noreturn]] void exec_child(char* const* argv, ChildOutput output, int null, int report,
                             pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  ::dup2(null, STDIN_FILENO);
  if (output.out >= 0) ::dup2(output.out, STDOUT_FILENO);
  if (output.err >= 0) ::dup2(output.err, STDERR_FILENO);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execvp(argv[0], argv);
  const int error = errno;
  [[maybe_unused]] const auto ignored = ::write(report, &error, sizeof error);
  ::_exit(127);
}

// The errno of a failed exec, or 0 once the child has exec'd.
int exec_error(int report) {
  int error = 0;
  ssize_t n = 0;
  while ((n = ::read(report, &error, sizeof error)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(sizeof error) ? error : 0;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw_errno("waitpid");
  return exit_code_of(status);
}

// Reads both pipes to EOF; false when the deadline passed first.
bool drain(Pipe& out, Pipe& err, CommandResult& result,
           std::chrono::steady_clock::time_point deadline) {
  std::array<pollfd, 2> fds{{{out.read, POLLIN, 0}, {err.read, POLLIN, 0}}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= 0ms) return false;
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR)
      throw_errno("poll");
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0)
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR)
        fds[i].fd = -1;
    }
  }
  return true;
}

std::string join(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) line += (line.empty() ? "" : " ") + word;
  return line;
}

}  // namespace

pid_t spawn_child(const std::vector<std::string>& argv, ChildOutput output) {
  if (argv.empty()) throw std::invalid_argument("spawn_child: no program");
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  Pipe report;
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0) throw_errno("open /dev/null");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(args.data(), output, null, report.write, parent);
  close_fd(null);
  if (pid < 0) throw_errno("fork");
  close_fd(report.write);
  if (const int error = exec_error(report.read)) {
    wait_for_exit(pid);
    throw std::system_error(error, std::generic_category(), "cannot run " + argv[0]);
  }
  return pid;
}

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CommandResult result;
  Pipe out;
  Pipe err;
  pid_t pid = -1;
  try {
    pid = spawn_child(argv, {out.write, err.write});
  } catch (const std::system_error& e) {
    result.exit_code = 127;
    result.err = e.what();
    return result;
  }
  close_fd(out.write);
  close_fd(err.write);
  if (!drain(out, err, result, std::chrono::steady_clock::now() + timeout)) {
    result.timed_out = true;
    ::kill(pid, SIGKILL);
  }
  result.exit_code = wait_for_exit(pid);
  return result;
}

std::string run_or_throw(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CommandResult result = run_command(argv, timeout);
  if (result.ok()) return result.out;
  const std::string how =
      result.timed_out ? "timed out" : "failed (exit " + std::to_string(result.exit_code) + ")";
  throw std::runtime_error(join(argv) + " " + how + ": " + result.err);
}

int exit_code_of(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

bool running_under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

bool program_in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace trimd::test
