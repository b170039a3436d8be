// What systemd is doing with trimd's own unit: asked over the system bus
// when trimd stops, to tell a restart from a stop (lib/policy/takeover.hpp).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace trimd {

// The type of the job systemd runs on the unit this process belongs to
// ("stop", "restart", ...), or nothing: no systemd, not in a unit, no job,
// or no answer within `timeout`.
std::optional<std::string> own_unit_job_type(std::chrono::milliseconds timeout);

}  // namespace trimd
