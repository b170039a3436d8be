#include "bus_fixture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "wait_until.hpp"

namespace trimd::test {

namespace {

// argv as execvp wants it, built before fork(): after fork in a threaded
// process the child may only make async-signal-safe calls.
std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return args;
}

[[noreturn]] void exec_child(char* const* args, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(127);  // the parent died before prctl
  execvp(args[0], args);
  constexpr char kMessage[] = "exec failed\n";
  [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  _exit(127);
}

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) < 0) throw std::runtime_error("pipe2 failed");
}

// Reads both pipes until their writer closed them, or until `deadline`.
bool drain(int out_fd, int err_fd, CommandResult& into,
           std::chrono::steady_clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&into.out, &into.err};
  int open_fds = 2;
  char buffer[4096];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    if (poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else {
        fds[i].fd = -1;  // poll ignores negative fds
        --open_fds;
      }
    }
  }
  return true;
}

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

}  // namespace

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

bool program_available(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "trimd-bus-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
  chmod(path_.c_str(), 0755);  // uid 65534 must reach the bus socket
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) {
  int out[2];
  make_pipe(out);
  auto args = c_argv(argv);
  int log = -1;
  if (!log_path.empty()) log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    if (log >= 0) dup2(log, STDERR_FILENO);
    exec_child(args.data(), parent);
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
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0)
      return std::nullopt;
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

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  int out[2], err[2];
  make_pipe(out);
  make_pipe(err);
  auto args = c_argv(argv);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    exec_child(args.data(), parent);
  }
  ::close(out[1]);
  ::close(err[1]);
  CommandResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const bool finished = drain(out[0], err[0], result, deadline);
  ::close(out[0]);
  ::close(err[0]);
  if (!finished) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = finished ? exit_code_of(status) : -1;
  return result;
}

std::vector<std::string> as_nobody(std::vector<std::string> argv) {
  std::vector<std::string> full{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

PrivateBus::PrivateBus() {
  const std::string socket = "unix:path=" + (dir_.path() / "bus").string();
  daemon_.emplace(std::vector<std::string>{"dbus-daemon", "--config-file=" TRIMD_TEST_BUS_CONF,
                                           "--address=" + socket, "--nofork",
                                           "--print-address=1"},
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
