# Shared by the bench smoke tests (source it after setting $smoke_name).
# say/fail/skip, and require_capabilities TOOL...: root, /dev/fuse and the
# tools, or skip with exit 77 (a failure under CI=true, never a skip: the
# CI rule of tests/common/ci_rule.sh).

# shellcheck source=tests/common/ci_rule.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tests/common/ci_rule.sh"
ci_rule_name=$smoke_name

say() { echo "${smoke_name}: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
skip() { skip_or_fail "$@"; }

require_capabilities() {
    [[ $EUID -eq 0 ]] || skip "needs root"
    [[ -c /dev/fuse ]] || skip "no /dev/fuse"
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || skip "no $tool"
    done
}
