// The narrow interface around turning a mounted filesystem's online discard
// off and on. The real one reconfigures only that one superblock parameter
// with the new mount API (fspick + fsconfig), never a whole option string:
// see docs/takeover.md for why mount(2) with MS_REMOUNT is not safe here.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "discard_mode.hpp"
#include "mount_instance.hpp"

namespace trimd {

enum class RemountResult {
  Done,     // the superblock options now say what was asked
  Ignored,  // the kernel accepted the call but kept the option (xfs does)
  Failed,   // the call failed: `message` says why
};

struct RemountOutcome {
  RemountResult result = RemountResult::Done;
  std::string message;  // for Ignored and Failed
};

struct RemountTarget {
  std::string mount_point;
  dev_t device = 0;  // st_dev the mount point must still have; 0 = don't check
};

class Remounter {
 public:
  virtual ~Remounter() = default;
  // `discard` true sets the filesystem's synchronous `discard`, false
  // `nodiscard`; every other option stays as it is.
  virtual RemountOutcome set_discard(const RemountTarget& target, bool discard) = 0;
  // Which mount is at `mount_point` now (its superblock options given). By
  // default one that cannot be told from another: only the options.
  virtual MountInstance instance_at(const std::string& /*mount_point*/,
                                    const std::vector<std::string>& super_options) {
    return {{}, 0, 0, options_but_discard(super_options)};
  }
};

// fspick(2) + fsconfig(2) on the filesystem at the mount point, then a look
// at /proc/self/mountinfo to see what the kernel made of it.
class FsconfigRemounter final : public Remounter {
 public:
  RemountOutcome set_discard(const RemountTarget& target, bool discard) override;
  MountInstance instance_at(const std::string& mount_point,
                            const std::vector<std::string>& super_options) override {
    return probe_mount_instance(mount_point, super_options);
  }
};

// What set_discard must find afterwards in the superblock options.
DiscardMode discard_mode_after(bool discard);

}  // namespace trimd
