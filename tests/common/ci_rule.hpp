// The one rule for a test that cannot run here: it skips, except under
// CI=true, where a missing capability (root, a tool, a device) is a failure.
// Every C++ tier uses these; tests/pykit/ci.py and tests/ci_rule.sh say the
// same for the Python and shell tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace trimd::test {

bool running_under_ci();  // the environment has CI=true

}  // namespace trimd::test

// Fails the test under CI=true, skips it otherwise; `why` says what is missing.
#define TRIMD_SKIP_OR_FAIL(why)                                           \
  do {                                                                    \
    if (::trimd::test::running_under_ci())                                \
      FAIL() << (why) << " (CI=true: a missing capability is a failure)"; \
    else                                                                  \
      GTEST_SKIP() << (why);                                              \
  } while (0)

// The same when `reason_expr` (a std::optional<std::string>) holds a reason.
#define TRIMD_SKIP_OR_FAIL_IF(reason_expr)                                            \
  do {                                                                                \
    if (const auto trimd_reason_ = (reason_expr)) TRIMD_SKIP_OR_FAIL(*trimd_reason_); \
  } while (0)
