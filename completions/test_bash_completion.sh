#!/bin/bash
# Unit test: the bash completions offer trimctl's commands and options and
# trimd's options. Exit 77 (skipped) without bash-completion, a failure
# under CI=true.
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
framework=/usr/share/bash-completion/bash_completion
# shellcheck source=tests/common/ci_rule.sh
source "$dir/../tests/common/ci_rule.sh"
[ -r "$framework" ] || skip_or_fail "bash-completion is not installed"
# shellcheck disable=SC1090
source "$framework"
source "$dir/trimctl.bash"
source "$dir/trimd.bash"

failures=0
# complete_line FUNCTION WORD...: what FUNCTION offers for the last word.
complete_line() {
  local fn=$1
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="${COMP_WORDS[*]}"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  "$fn"
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}
expect() {
  local want=$1 got=$2 what=$3
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: want '$want', got '$got'"
    failures=$((failures + 1))
  fi
}

expect "trim " "$(complete_line _trimctl trimctl tr)" "trimctl tr<TAB>"
expect "pause " "$(complete_line _trimctl trimctl --json pa)" "commands after an option"
expect "--ignore-idle " "$(complete_line _trimctl trimctl trim --ig)" "trim's own options"
expect " " "$(complete_line _trimctl trimctl status --ig)" "no trim options for status"
expect "/proc " "$(complete_line _trimctl trimctl status /pro)" "mount points"
expect "--dry-run " "$(complete_line _trimd trimd --dry)" "trimd options"
expect "debug " "$(complete_line _trimd trimd --log-level de)" "log levels"
expect "json " "$(complete_line _trimd trimd --log-format j)" "log formats"
[ "$failures" = 0 ] && echo "all completions as expected"
exit $((failures > 0))
