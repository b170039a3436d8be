// Skip (or, under CI=true, fail) the current test when a program it needs
// is not in PATH: the CI rule (ci_rule.hpp) for programs.
#pragma once

#include <string>

#include "ci_rule.hpp"
#include "find_program.hpp"

#define TRIMD_REQUIRE_PROGRAM(name)                                \
  do {                                                             \
    if (!::trimd::test::find_program(name))                        \
      TRIMD_SKIP_OR_FAIL(std::string(name) + " is not installed"); \
  } while (0)
