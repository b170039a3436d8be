#!/bin/sh
# needs.sh PROGRAM... -- COMMAND...: runs COMMAND when every PROGRAM is on
# PATH; otherwise skips, or fails under CI=true (tests/common/ci_rule.sh).
. "$(dirname "$0")/../common/ci_rule.sh"
ci_rule_name=needs.sh
missing=
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  command -v "$1" >/dev/null 2>&1 || missing="$missing $1"
  shift
done
[ "${1:-}" = -- ] && shift
[ -z "$missing" ] || skip_or_fail "not installed:$missing"
exec "$@"
