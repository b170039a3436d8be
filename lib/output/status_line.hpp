// The one-line summary trimd hands systemd as STATUS= (shown by "systemctl
// status trimd"): what runs now, what waits, and what comes next.
#pragma once

#include <string>
#include <vector>

#include "manager.hpp"
#include "time.hpp"

namespace trimd {

// e.g. "trimming /home 42%, 1 waiting for idle disks; next: / in 2d".
// "idle" with nothing tracked or due.
std::string status_line(const std::vector<FsStatus>& filesystems, TimePoint now);

// The largest whole unit only, as fits a status line: "2d", "5h", "12min", "30s".
std::string coarse_duration(Duration d);

}  // namespace trimd
