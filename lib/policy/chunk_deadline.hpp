// When a chunk still in the kernel is killed for time (the daemon's
// ChunkRunner asks at every sample). The job's time_limit (chunk_sizing.hpp)
// bounds how long a runner keeps its filesystem busy for umount. A runner
// that trims through a detached copy of the mount keeps nothing busy: umount
// goes through at once, and the daemon kills a runner whose mount has left
// mountinfo. Killing such a chunk for time only throws away the discards it
// sent (the retry starts again at the chunk's start; measured on W1 ext4, a
// dense 128 MiB group killed at 4, 4 and 8 s: 31% more discards than fstrim),
// so it is held to its time_limit only once it pins the mount or has met
// foreground I/O, and to kMaxChunkTimeLimit, the bound on a stuck call,
// until then. A preemptible chunk is killed at its first foreground byte
// anyway; the limit is for the others (gentle, --ignore-idle). With
// preemption off (OnForeground::Ignore) foreground I/O is not looked at.
#pragma once

#include "chunk_sizing.hpp"
#include "time.hpp"

namespace trimd {

// How the runner reaches the filesystem.
enum class MountHold {
  DetachedCopy,  // open_tree(OPEN_TREE_CLONE): umount is not held up
  MountItself,   // no copy could be made: umount fails with EBUSY meanwhile
};

// What a chunk is held to right now: `time_limit` (0 = none) or, for a
// detached copy that has seen no foreground I/O, the safety bound.
Duration enforced_time_limit(Duration time_limit, MountHold hold, bool foreground_seen);

class ChunkDeadline {
 public:
  ChunkDeadline(SteadyPoint started, Duration time_limit, MountHold hold);
  // Foreground I/O reached the chunk's disks: from now on the job's limit.
  void foreground_seen() { foreground_seen_ = true; }
  Duration limit() const;
  bool passed(SteadyPoint now) const;

 private:
  SteadyPoint started_;
  Duration time_limit_;
  MountHold hold_;
  bool foreground_seen_ = false;
};

}  // namespace trimd
