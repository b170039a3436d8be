// fork and exec with everything the child needs prepared before the fork:
// between the two only async-signal-safe calls.
#include "spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

#include "find_program.hpp"
#include "posix_util.hpp"

extern char** environ;

namespace trimd::test {

namespace {

// argv or envp as exec wants them: pointers into `strings`, then nullptr.
std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

std::vector<std::string> environment_of(const ChildSetup& setup) {
  std::map<std::string, std::string> variables;
  if (setup.minimal_environment) {
    variables = {{"TZ", "UTC"}, {"LC_ALL", "C"}};
    if (const char* path = std::getenv("PATH")) variables["PATH"] = path;
  } else {
    for (char** entry = environ; *entry; ++entry) {
      const std::string text(*entry);
      const auto equals = text.find('=');
      if (equals != std::string::npos) variables[text.substr(0, equals)] = text.substr(equals + 1);
    }
  }
  for (const auto& [name, value] : setup.environment) variables[name] = value;
  std::vector<std::string> environment;
  for (const auto& [name, value] : variables) environment.push_back(name + "=" + value);
  return environment;
}

struct ExecPlan {
  std::string program;
  char* const* argv;
  char* const* envp;
  const char* working_directory;  // nullptr: stay
  ChildStreams streams;
  int null;
  int report;  // close-on-exec: a failed step sends its errno here, a successful exec nothing
  pid_t parent;
};

[[noreturn]] void fail_in_child(int report) {
  const int error = errno;
  [[maybe_unused]] const auto ignored = ::write(report, &error, sizeof error);
  ::_exit(127);
}

[[noreturn]] void exec_child(const ExecPlan& plan) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != plan.parent) ::_exit(127);  // the parent died before prctl
  const ChildStreams& s = plan.streams;
  if (s.controlling_terminal && (::setsid() < 0 || ::ioctl(s.in, TIOCSCTTY, 0) < 0))
    fail_in_child(plan.report);
  ::dup2(s.in >= 0 ? s.in : plan.null, STDIN_FILENO);
  if (s.out >= 0) ::dup2(s.out, STDOUT_FILENO);
  if (s.err >= 0) ::dup2(s.err, STDERR_FILENO);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (plan.working_directory && ::chdir(plan.working_directory) != 0) fail_in_child(plan.report);
  ::execve(plan.program.c_str(), plan.argv, plan.envp);
  fail_in_child(plan.report);
}

// The errno of a failed start, or 0 once the child has exec'd.
int start_error(int report) {
  int error = 0;
  ssize_t n = 0;
  while ((n = ::read(report, &error, sizeof error)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(sizeof error) ? error : 0;
}

}  // namespace

pid_t spawn_child(const std::vector<std::string>& argv, ChildStreams streams,
                  const ChildSetup& setup) {
  if (argv.empty()) throw std::invalid_argument("spawn_child: no program");
  const auto program = find_program(argv[0]);
  if (!program) throw std::system_error(ENOENT, std::generic_category(), "cannot run " + argv[0]);
  std::vector<std::string> args_text = argv;
  std::vector<std::string> env_text = environment_of(setup);
  const auto args = c_strings(args_text);
  const auto env = c_strings(env_text);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw_errno("pipe2");
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0) {
    close_fd(report[0]);
    close_fd(report[1]);
    throw_errno("open /dev/null");
  }
  const ExecPlan plan{
      *program,   args.data(),
      env.data(), setup.working_directory.empty() ? nullptr : setup.working_directory.c_str(),
      streams,    null,
      report[1],  ::getpid()};
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(plan);
  int null_fd = null;
  close_fd(null_fd);
  close_fd(report[1]);
  if (pid < 0) {
    close_fd(report[0]);
    throw_errno("fork");
  }
  const int error = start_error(report[0]);
  close_fd(report[0]);
  if (error != 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw std::system_error(error, std::generic_category(), "cannot run " + argv[0]);
  }
  return pid;
}

int exit_code_of(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

}  // namespace trimd::test
