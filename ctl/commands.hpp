// trimctl's commands. Each returns the exit status; failures throw
// (Failure, BusError, Unreachable, UsageError) and main() reports them.
#pragma once

#include <stdexcept>

#include "client.hpp"
#include "options.hpp"

namespace trimctl {

// Exit statuses (see trimctl(1)).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;

// The operation failed on this side (e.g. an unknown mount point): exit 1.
class Failure : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

int status_command(Client& client, const Options& options);
int trim_command(Client& client, const Options& options);
int pause_command(Client& client, const Options& options);
int resume_command(Client& client, const Options& options);
int cancel_command(Client& client, const Options& options);
int reload_command(Client& client, const Options& options);
int notify_freed_command(Client& client, const Options& options);
int monitor_command(Client& client, const Options& options);
int takeover_command(Client& client, const Options& options);  // ctl/takeover.cpp
int release_command(Client& client, const Options& options);
int history_command(Client& client, const Options& options);
int fleet_command(Client& client, const Options& options);  // ctl/fleet.cpp

// Checks what can be checked before connecting, so a typo is a usage
// error whether trimd runs or not.
void validate_notify_freed(const Options& options);

}  // namespace trimctl
