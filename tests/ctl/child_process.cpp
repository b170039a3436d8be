#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <stdexcept>

namespace trimctl_test {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> child_environment(const ChildOptions& options) {
  std::map<std::string, std::string> variables{{"TZ", "UTC"}, {"LC_ALL", "C"}};
  if (const char* path = std::getenv("PATH")) variables["PATH"] = path;
  for (const auto& [name, value] : options.environment) variables[name] = value;
  std::vector<std::string> environment;
  for (const auto& [name, value] : variables) environment.push_back(name + "=" + value);
  return environment;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

[[noreturn]] void exec_child(std::vector<std::string> argv, const ChildOptions& options) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The test may have blocked signals; trimctl must start with defaults.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (!options.working_directory.empty() && chdir(options.working_directory.c_str()) != 0)
    _exit(126);
  auto environment = child_environment(options);
  auto args = c_strings(argv);
  auto env = c_strings(environment);
  execve(args[0], args.data(), env.data());
  _exit(127);
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options) {
  if (options.terminal) {
    winsize size{};
    size.ws_col = 100;
    size.ws_row = 30;
    pid_ = forkpty(&out_fd_, nullptr, nullptr, &size);
    if (pid_ == 0) exec_child(argv, options);
    if (pid_ < 0) throw std::runtime_error("forkpty failed");
    return;
  }
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe2 failed");
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    exec_child(argv, options);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  if (pid_ < 0) throw std::runtime_error("fork failed");
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

bool ChildProcess::read_some(int timeout_ms) {
  std::array<pollfd, 2> fds{{{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}}};
  if (out_fd_ < 0 && err_fd_ < 0) return false;
  if (poll(fds.data(), fds.size(), timeout_ms) <= 0) return true;
  auto drain = [](pollfd& p, int& fd, std::string& into) {
    if (fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) return;
    char buffer[4096];
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
    } else {  // EOF, or EIO from a pty whose child has gone
      close(fd);
      fd = -1;
    }
  };
  drain(fds[0], out_fd_, result_.out);
  drain(fds[1], err_fd_, result_.err);
  return out_fd_ >= 0 || err_fd_ >= 0;
}

bool ChildProcess::wait_for_output(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (result_.out.find(needle) == std::string::npos) {
    if (Clock::now() >= deadline || !read_some(remaining_ms(deadline))) return false;
  }
  return true;
}

void ChildProcess::send_signal(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

ChildResult ChildProcess::finish(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (read_some(remaining_ms(deadline))) {
    if (Clock::now() >= deadline) {
      result_.timed_out = true;
      kill(pid_, SIGKILL);
      break;
    }
  }
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result_;
}

ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& options) {
  ChildProcess child(argv, options);
  return child.finish(std::chrono::seconds(30));
}

}  // namespace trimctl_test
