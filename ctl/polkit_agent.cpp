#include "polkit_agent.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace trimctl {

namespace {

// Long enough for polkit to answer on a loaded machine; a stuck agent
// must not hold the command for ever.
constexpr int kReadyTimeoutMs = 10000;

bool is_executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

[[noreturn]] void exec_agent(const std::string& agent_path, pid_t client, int notify_fd) {
  const std::string process = std::to_string(client);
  const std::string fd = std::to_string(notify_fd);
  std::vector<const char*> argv{agent_path.c_str(), "--process",  process.c_str(), "--notify-fd",
                                fd.c_str(),         "--fallback", nullptr};
  execv(agent_path.c_str(), const_cast<char* const*>(argv.data()));
  _exit(127);
}

// pkttyagent closes (or writes to) the notify fd once polkit knows it.
void wait_until_ready(int fd) {
  pollfd ready{fd, POLLIN, 0};
  while (poll(&ready, 1, kReadyTimeoutMs) < 0 && errno == EINTR) {
  }
}

}  // namespace

bool polkit_agent_wanted(uid_t euid, bool stdin_tty, bool ask_password,
                         const std::string& agent_path) {
  return euid != 0 && stdin_tty && ask_password && is_executable(agent_path);
}

std::string find_polkit_agent() {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    const auto colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    dirs.remove_prefix(colon == std::string_view::npos ? dirs.size() : colon + 1);
    if (!dir.empty() && is_executable(dir + "/pkttyagent")) return dir + "/pkttyagent";
  }
  return is_executable("/usr/bin/pkttyagent") ? "/usr/bin/pkttyagent" : "";
}

PolkitAgent::PolkitAgent(const std::string& agent_path) {
  int notify[2];
  if (pipe2(notify, O_CLOEXEC) != 0) return;  // no agent: polkit refuses, trimd says so
  const pid_t client = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    close(notify[0]);
    // The write end must survive exec: it is the agent's to close.
    fcntl(notify[1], F_SETFD, 0);
    exec_agent(agent_path, client, notify[1]);
  }
  close(notify[1]);
  if (pid_ > 0) wait_until_ready(notify[0]);
  close(notify[0]);
}

PolkitAgent::~PolkitAgent() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

std::unique_ptr<PolkitAgent> start_polkit_agent(bool ask_password) {
  const std::string agent = find_polkit_agent();
  if (!polkit_agent_wanted(geteuid(), isatty(STDIN_FILENO) == 1, ask_password, agent))
    return nullptr;
  return std::make_unique<PolkitAgent>(agent);
}

}  // namespace trimctl
