// What the host offers and runs: commands, prerequisites, the mount and loop tables.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "loopfs.hpp"
#include "posix_util.hpp"

extern char** environ;

namespace trimd::test {

using namespace std::chrono_literals;

namespace {

// ---- running commands ----------------------------------------------------

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
};

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
      if (n > 0) sinks[i]->append(buffer, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) fds[i].fd = -1;
    }
  }
  return true;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw_errno("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string join(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) line += (line.empty() ? "" : " ") + word;
  return line;
}

bool in_path(const std::string& tool) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + tool).c_str(), X_OK) == 0) return true;
  return false;
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  if (argv.empty()) throw std::invalid_argument("run_command: no program");
  CommandResult result;
  Pipe out;
  Pipe err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawn_error = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close_fd(out.write);
  close_fd(err.write);
  if (spawn_error != 0) {
    result.exit_code = 127;
    result.err = "cannot run " + argv[0] + ": " + std::strerror(spawn_error);
    return result;
  }
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
  const std::string how = result.timed_out
                              ? "timed out"
                              : "failed (exit " + std::to_string(result.exit_code) + ")";
  throw std::runtime_error(join(argv) + " " + how + ": " + result.err);
}

bool running_under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

std::optional<std::string> missing_root() {
  if (::geteuid() != 0) return "needs root (loop devices, mount, FITRIM)";
  if (::access("/dev/loop-control", R_OK | W_OK) != 0) return "needs /dev/loop-control";
  return std::nullopt;
}

std::optional<std::string> missing_tools(const std::vector<std::string>& tools) {
  std::vector<std::string> missing;
  std::copy_if(tools.begin(), tools.end(), std::back_inserter(missing),
               [](const std::string& tool) { return !in_path(tool); });
  if (missing.empty()) return std::nullopt;
  return "missing tools: " + join(missing);
}

// Compares the raw field: fine for the kit's own paths, which have no spaces to escape.
bool is_mounted(const std::string& mount_point) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::string id, parent, devnum, root, target;
    fields >> id >> parent >> devnum >> root >> target;
    if (target == mount_point) return true;
  }
  return false;
}

bool is_attached(const std::string& backing_file) {
  return run_or_throw({"losetup", "-a"}).find(backing_file) != std::string::npos;
}

}  // namespace trimd::test
