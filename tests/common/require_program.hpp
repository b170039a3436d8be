// Skip (or, under CI=true, fail) the current test when a program it needs
// is not in PATH: the one rule every test kit follows.
#pragma once

#include <gtest/gtest.h>

#include "command.hpp"

#define TRIMD_REQUIRE_PROGRAM(name)                                              \
  do {                                                                           \
    if (!::trimd::test::program_in_path(name)) {                                 \
      if (::trimd::test::running_under_ci()) FAIL() << (name) << " is required"; \
      GTEST_SKIP() << (name) << " is not installed";                             \
    }                                                                            \
  } while (0)
