#include "private_bus.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace trimctl_test {

namespace {

std::string make_temporary_directory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "trimctl-test-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  return pattern;
}

// Reads what dbus-daemon prints on --print-address: one line.
std::string read_line(int fd, int timeout_ms) {
  std::string line;
  while (line.find('\n') == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) break;
    char buffer[256];
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    line.append(buffer, static_cast<std::size_t>(n));
  }
  if (const auto end = line.find('\n'); end != std::string::npos) line.resize(end);
  return line;
}

}  // namespace

std::optional<std::string> find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream directories(path ? path : "/usr/bin:/bin");
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    const auto candidate = std::filesystem::path(directory) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

std::optional<std::string> PrivateBus::find_dbus_daemon() { return find_program("dbus-daemon"); }

PrivateBus::PrivateBus(const std::string& dbus_daemon) : directory_(make_temporary_directory()) {
  int address_pipe[2];
  if (pipe2(address_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  const std::string config = "--config-file=" TRIMCTL_TEST_BUS_CONFIG;
  const std::string listen = "--address=unix:path=" + directory_ + "/bus";
  const std::string print = "--print-address=" + std::to_string(address_pipe[1]);
  const std::string log = directory_ + "/dbus-daemon.log";

  pid_ = fork();
  if (pid_ == 0) {
    // Dies with the test, even when the test crashes.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    fcntl(address_pipe[1], F_SETFD, 0);
    const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log_fd >= 0) {
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
    }
    execl(dbus_daemon.c_str(), dbus_daemon.c_str(), config.c_str(), listen.c_str(), print.c_str(),
          "--nofork", "--nopidfile", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(address_pipe[1]);
  if (pid_ < 0) {
    close(address_pipe[0]);
    throw std::runtime_error("fork failed");
  }
  address_ = read_line(address_pipe[0], 10000);
  close(address_pipe[0]);
  if (address_.empty()) {
    stop();
    throw std::runtime_error("dbus-daemon did not start; see " + log);
  }
}

PrivateBus::~PrivateBus() {
  stop();
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

void PrivateBus::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace trimctl_test
