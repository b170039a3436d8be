#include "pager.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace trimctl {

namespace {

// In the child, with the pipe on stdin. Returns only when nothing ran.
void exec_pager(const std::string& command) {
  const char* less_options = std::getenv("SYSTEMD_LESS");
  setenv("LESS", less_options ? less_options : "FRSXMK", 1);
  // trimctl writes UTF-8 ("…") whatever the locale says.
  setenv("LESSCHARSET", "utf-8", 0);
  if (!command.empty()) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    return;
  }
  execlp("less", "less", static_cast<char*>(nullptr));
  execlp("more", "more", static_cast<char*>(nullptr));
}

// No pager could be started: pass the text through unpaged.
[[noreturn]] void copy_through() {
  char buffer[4096];
  ssize_t n;
  while ((n = read(STDIN_FILENO, buffer, sizeof buffer)) > 0)
    if (write(STDOUT_FILENO, buffer, static_cast<std::size_t>(n)) != n) break;
  _exit(0);
}

}  // namespace

std::optional<std::string> pager_command(const std::function<const char*(const char*)>& getenv,
                                         bool stdout_tty, bool pager_wanted) {
  if (!pager_wanted || !stdout_tty) return std::nullopt;
  const char* command = getenv("SYSTEMD_PAGER");
  if (!command) command = getenv("PAGER");
  if (!command) return std::string();
  const std::string text = command;
  if (text.empty() || text == "cat") return std::nullopt;
  return text;
}

Pager::Pager(const std::string& command) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return;  // unpaged, then
  std::fflush(stdout);
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    dup2(pipe_fds[0], STDIN_FILENO);
    close(pipe_fds[1]);
    exec_pager(command);
    copy_through();
  }
  close(pipe_fds[0]);
  if (pid_ > 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    // A person who quits the pager early has seen enough: no SIGPIPE death.
    signal(SIGPIPE, SIG_IGN);
  }
  close(pipe_fds[1]);
}

Pager::~Pager() {
  if (pid_ <= 0) return;
  std::fflush(stdout);
  // End of input for the pager: stdout no longer reaches it.
  const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, STDOUT_FILENO);
    close(null_fd);
  } else {
    close(STDOUT_FILENO);
  }
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

std::unique_ptr<Pager> start_pager(bool stdout_tty, bool pager_wanted) {
  const auto command = pager_command(
      [](const char* name) -> const char* { return std::getenv(name); }, stdout_tty, pager_wanted);
  if (!command) return nullptr;
  return std::make_unique<Pager>(*command);
}

}  // namespace trimctl
