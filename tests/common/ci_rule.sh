# The CI rule for shell tests, to be sourced (sh or bash): a test that lacks
# what it needs (root, a tool, a device) skips with exit 77, except under
# CI=true, where a missing capability is a failure (exit 1). The same rule
# as tests/common/ci_rule.hpp (C++) and tests/pykit/ci.py (Python).
#
#   . "$top/tests/common/ci_rule.sh"
#   command -v rpmspec >/dev/null || skip_or_fail "rpmspec is not installed"
#
# The message goes to stderr, prefixed with $ci_rule_name when it is set
# (else the script's name).

running_under_ci() {
  [ "${CI:-}" = true ]
}

skip_or_fail() {
  if running_under_ci; then
    echo "${ci_rule_name:-${0##*/}}: $* (CI=true: a missing capability is a failure)" >&2
    exit 1
  fi
  echo "${ci_rule_name:-${0##*/}}: SKIP: $*" >&2
  exit 77
}
