#include "bus_fixture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "wait_until.hpp"

namespace trimd::test {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) < 0) throw std::runtime_error("pipe2 failed");
  int log = -1;
  if (!log_path.empty())
    log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  try {
    pid_ = spawn_child(argv, {out[1], log});
  } catch (...) {
    for (int fd : {out[0], out[1], log})
      if (fd >= 0) ::close(fd);
    throw;
  }
  if (log >= 0) ::close(log);
  ::close(out[1]);
  stdout_fd_ = out[0];
}

ChildProcess::~ChildProcess() {
  stop();
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

std::optional<std::string> ChildProcess::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (buffered_.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{stdout_fd_, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
    char buffer[512];
    const ssize_t n = ::read(stdout_fd_, buffer, sizeof buffer);
    if (n <= 0) return std::nullopt;
    buffered_.append(buffer, static_cast<std::size_t>(n));
  }
  const auto end = buffered_.find('\n');
  std::string line = buffered_.substr(0, end);
  buffered_.erase(0, end + 1);
  return line;
}

bool ChildProcess::running() {
  if (status_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
  return !status_;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) return *status_;
  kill(pid_, SIGTERM);
  if (!wait_until([&] { return !running(); }, grace)) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    status_ = status;
  }
  return *status_;
}

std::vector<std::string> as_nobody(std::vector<std::string> argv) {
  std::vector<std::string> full{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

PrivateBus::PrivateBus() {
  const std::string socket = "unix:path=" + (dir_.path() / "bus").string();
  daemon_.emplace(std::vector<std::string>{"dbus-daemon", "--config-file=" TRIMD_TEST_BUS_CONF,
                                           "--address=" + socket, "--nofork", "--print-address=1"},
                  (dir_.path() / "dbus-daemon.log").string());
  // The address is printed once the socket listens.
  auto line = daemon_->read_line(std::chrono::seconds{10});
  if (!line || line->empty()) throw std::runtime_error("dbus-daemon did not start");
  address_ = *line;
}

std::vector<std::string> PrivateBus::busctl(std::vector<std::string> args) const {
  args.insert(args.begin(), {"busctl", "--address=" + address_});
  return args;
}

std::vector<std::string> PrivateBus::dbus_send(std::vector<std::string> args) const {
  args.insert(args.begin(), {"dbus-send", "--bus=" + address_, "--print-reply"});
  return args;
}

}  // namespace trimd::test
