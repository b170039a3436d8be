// One FITRIM in a child process: forked for one chunk, killable at any time.
// A thread inside FITRIM cannot be stopped; a process can: the kernel checks
// for a fatal signal between free extents and returns within about one
// discard (docs/preemption.md has the measurements).
#pragma once

#include <sys/types.h>

#include <optional>

#include "preemption.hpp"
#include "trimmer.hpp"
#include "unique_fd.hpp"

namespace trimd {

class RunnerProcess {
 public:
  // Forks the child; it dies with trimd (PR_SET_PDEATHSIG). Throws
  // std::system_error when no child can be made.
  RunnerProcess(const TrimTarget& target, const TrimRange& range);
  ~RunnerProcess();  // SIGKILL and reap when still there
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Readable (EPOLLIN) once the child has exited.
  int pidfd() const { return pidfd_.get(); }
  void kill();
  // What the child caused the block layer to do so far (/proc/PID/io);
  // nothing when it cannot be read. Works until the child is reaped.
  std::optional<IoBytes> io() const;

  struct Exit {
    std::optional<RawTrim> raw;  // what the child reported, when it got that far
    int signal = 0;              // the signal that killed it; 0 when it exited
    int status = 0;              // its exit status otherwise
  };
  // Reaps the exited child. Call once pidfd() is readable.
  Exit reap();

 private:
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd result_;  // read end of the pipe the child writes its RawTrim to
  bool reaped_ = false;
};

}  // namespace trimd
