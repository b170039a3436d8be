# Shared by the bench smoke tests (source it after setting $smoke_name).
# say/fail/skip, and require_capabilities TOOL...: root, /dev/fuse and the
# tools, or skip with exit 77 (a failure under CI=true, never a skip).

say() { echo "${smoke_name}: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
skip() {
    if [[ ${CI:-} == true ]]; then
        fail "$* (CI=true: a missing capability is a failure)"
    fi
    say "SKIP: $*"
    exit 77
}

require_capabilities() {
    [[ $EUID -eq 0 ]] || skip "needs root"
    [[ -c /dev/fuse ]] || skip "no /dev/fuse"
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || skip "no $tool"
    done
}
