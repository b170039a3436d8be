// How the trimctl tests (and tests/docs) run trimctl and trimd: to the end,
// killed after 30 s, with a minimal environment, because what trimctl prints
// depends on it (TZ, the locale, a pager, colours, a bus address).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "command.hpp"

namespace trimctl_test {

using trimd::test::ChildOptions;
using trimd::test::ChildProcess;
using trimd::test::CommandResult;

// Only PATH, TZ=UTC and LC_ALL=C; a test adds what it sets.
inline ChildOptions trimctl_options() {
  ChildOptions options;
  options.minimal_environment = true;
  return options;
}

inline CommandResult run_child(const std::vector<std::string>& argv,
                               const ChildOptions& options = trimctl_options()) {
  return trimd::test::run_command(argv, options, std::chrono::seconds(30));
}

}  // namespace trimctl_test
