#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

#include "posix_util.hpp"
#include "wait_until.hpp"

namespace trimd::test {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Closes both ends unless release()d: a start that throws leaks nothing.
struct Fds {
  std::array<int, 3> fd{-1, -1, -1};
  ~Fds() {
    for (int& f : fd) close_fd(f);
  }
  int release(std::size_t i) { return std::exchange(fd[i], -1); }
};

void pipe_into(int& read_end, int& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe2");
  read_end = fds[0];
  write_end = fds[1];
}

void terminal_into(int& master, int& slave) {
  winsize size{};
  size.ws_col = 100;
  size.ws_row = 30;
  if (::openpty(&master, &slave, nullptr, nullptr, &size) != 0) throw_errno("openpty");
  ::fcntl(master, F_SETFD, FD_CLOEXEC);
  ::fcntl(slave, F_SETFD, FD_CLOEXEC);
}

milliseconds left_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? left : milliseconds{0};
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const ChildOptions& options) {
  Fds parent;  // our ends: stdout, stderr
  Fds child;   // the child's: stdout, stderr, stdin
  ChildStreams streams;
  if (options.terminal) {
    terminal_into(parent.fd[0], child.fd[0]);
    streams = {child.fd[0], child.fd[0], child.fd[0], true};
  } else {
    pipe_into(parent.fd[0], child.fd[0]);
    if (options.stderr_path.empty()) {
      pipe_into(parent.fd[1], child.fd[1]);
    } else {
      child.fd[1] =
          ::open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (child.fd[1] < 0) throw_errno("open " + options.stderr_path);
    }
    streams = {child.fd[0], child.fd[1]};
  }
  pid_ = spawn_child(argv, streams, options);
  out_fd_ = parent.release(0);
  err_fd_ = parent.release(1);
}

ChildProcess::~ChildProcess() {
  stop();
  close_fd(out_fd_);
  close_fd(err_fd_);
}

bool ChildProcess::read_some(milliseconds timeout) {
  std::array<pollfd, 2> fds{{{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}}};
  if (out_fd_ < 0 && err_fd_ < 0) return false;
  if (::poll(fds.data(), fds.size(), static_cast<int>(timeout.count())) <= 0) return true;
  const std::array<int*, 2> owners{&out_fd_, &err_fd_};
  const std::array<std::string*, 2> sinks{&result_.out, &result_.err};
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (*owners[i] < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buffer[4096];
    const ssize_t n = ::read(*owners[i], buffer, sizeof buffer);
    if (n > 0)
      sinks[i]->append(buffer, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)  // the end, or EIO from a terminal whose child has gone
      close_fd(*owners[i]);
  }
  return out_fd_ >= 0 || err_fd_ >= 0;
}

std::optional<std::string> ChildProcess::read_line(milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto end = result_.out.find('\n', line_start_);
  while (end == std::string::npos) {
    if (out_fd_ < 0 || Clock::now() >= deadline || !read_some(left_until(deadline)))
      return std::nullopt;
    end = result_.out.find('\n', line_start_);
  }
  std::string line = result_.out.substr(line_start_, end - line_start_);
  line_start_ = end + 1;
  return line;
}

bool ChildProcess::wait_for_output(const std::string& needle, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (result_.out.find(needle) == std::string::npos) {
    if (out_fd_ < 0 || Clock::now() >= deadline || !read_some(left_until(deadline))) return false;
  }
  return true;
}

void ChildProcess::send_signal(int signal) {
  if (running()) ::kill(pid_, signal);
}

void ChildProcess::reap(int flags) {
  if (status_) return;
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(pid_, &status, flags)) < 0 && errno == EINTR) {
  }
  if (done == pid_) status_ = status;
}

bool ChildProcess::running() {
  reap(WNOHANG);
  return !status_;
}

int ChildProcess::stop(milliseconds grace) {
  if (running()) {
    ::kill(pid_, SIGTERM);
    if (!wait_until([&] { return !running(); }, grace)) {
      ::kill(pid_, SIGKILL);
      reap(0);
    }
  }
  return exit_code_of(*status_);
}

CommandResult ChildProcess::finish(milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (read_some(left_until(deadline))) {
    if (Clock::now() >= deadline) {
      result_.timed_out = true;
      if (running()) ::kill(pid_, SIGKILL);
      break;
    }
  }
  reap(0);
  result_.exit_code = exit_code_of(*status_);
  return result_;
}

}  // namespace trimd::test
