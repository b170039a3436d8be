// Running a program to its end from a test: its output captured, killed
// after a timeout (ChildProcess underneath).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "child_process.hpp"

namespace trimd::test {

// Runs argv[0] (searched in PATH) with stdin from /dev/null (or a terminal:
// options.terminal), capturing its output; it is killed after `timeout`. A
// program that cannot be run gives exit code 127 and says why in `err`.
CommandResult run_command(const std::vector<std::string>& argv, const ChildOptions& options,
                          std::chrono::milliseconds timeout = std::chrono::seconds(120));
CommandResult run_command(const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout = std::chrono::seconds(120));

// The same, throwing std::runtime_error with the command's stderr unless it succeeds.
std::string run_or_throw(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(120));

}  // namespace trimd::test
