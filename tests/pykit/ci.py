"""The CI rule: a test that lacks what it needs (root, a tool, a device)
skips, except under CI=true, where that is a failure. The same rule as
tests/common/ci_rule.hpp (C++) and tests/common/ci_rule.sh (shell)."""

import os

SKIP = 77  # ctest's SKIP_RETURN_CODE for every tier


def running_under_ci():
    return os.environ.get("CI") == "true"


def cannot_run(who, reason):
    """Says why `who` cannot run here; the exit status that follows the rule."""
    if running_under_ci():
        print(f"{who}: {reason} (CI=true: a missing capability is a failure)", flush=True)
        return 1
    print(f"{who}: skipped: {reason}", flush=True)
    return SKIP
