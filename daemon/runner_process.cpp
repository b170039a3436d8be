#include "runner_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <system_error>

#include "errno_error.hpp"
#include "system_view.hpp"

namespace trimd {

namespace {

// The child: only system calls from here to _exit (trimd may have other
// threads; their locks are not ours to take).
[[noreturn]] void run_child(pid_t parent, int result_fd, const TrimTarget& target,
                            const TrimRange& range) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(2);  // trimd died before the line above
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);  // trimd blocks SIGTERM for its signalfd
  const RawTrim raw = fitrim_raw(target, range);
  const bool written = ::write(result_fd, &raw, sizeof raw) == static_cast<ssize_t>(sizeof raw);
  ::_exit(written ? 0 : 3);
}

std::uint64_t field(const std::string& text, const char* name) {
  const auto at = text.find(name);
  if (at == std::string::npos) return 0;
  return std::strtoull(text.c_str() + at + std::char_traits<char>::length(name), nullptr, 10);
}

// Raw system calls: glibc 2.36's <sys/pidfd.h> lacks C linkage for C++.
int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0u)); }
int pidfd_kill(int pidfd) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0u));
}

}  // namespace

RunnerProcess::RunnerProcess(const TrimTarget& target, const TrimRange& range) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw_errno("pipe2");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw_errno("fork");
  if (pid_ == 0) run_child(parent, write_end.get(), target, range);
  result_ = std::move(read_end);
  pidfd_ = UniqueFd(pidfd_open(pid_));
  if (pidfd_.get() < 0) {
    const int error = errno;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    throw std::system_error(error, std::generic_category(), "pidfd_open");
  }
}

RunnerProcess::~RunnerProcess() {
  if (reaped_ || pid_ <= 0) return;
  kill();
  siginfo_t info{};
  ::waitid(P_PIDFD, static_cast<id_t>(pidfd_.get()), &info, WEXITED);
}

void RunnerProcess::kill() {
  if (!reaped_) pidfd_kill(pidfd_.get());
}

std::optional<IoBytes> RunnerProcess::io() const {
  const auto text = read_text_file("/proc/" + std::to_string(pid_) + "/io");
  if (!text) return std::nullopt;
  return IoBytes{field(*text, "\nread_bytes: "), field(*text, "\nwrite_bytes: ")};
}

RunnerProcess::Exit RunnerProcess::reap() {
  Exit exit;
  RawTrim raw;
  if (::read(result_.get(), &raw, sizeof raw) == static_cast<ssize_t>(sizeof raw)) exit.raw = raw;
  siginfo_t info{};
  if (::waitid(P_PIDFD, static_cast<id_t>(pidfd_.get()), &info, WEXITED) != 0)
    throw_errno("waitid");
  reaped_ = true;
  if (info.si_code == CLD_EXITED)
    exit.status = info.si_status;
  else
    exit.signal = info.si_status;
  return exit;
}

}  // namespace trimd
