#!/bin/sh
# needs.sh PROGRAM... -- COMMAND...: runs COMMAND when every PROGRAM is on
# PATH; otherwise says which is missing and skips (exit 77), or fails under
# CI=true, where a missing tool is the machine's fault, not the test's.
missing=
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  command -v "$1" >/dev/null 2>&1 || missing="$missing $1"
  shift
done
[ "${1:-}" = -- ] && shift
if [ -n "$missing" ]; then
  echo "not installed:$missing"
  [ "${CI:-}" = true ] && exit 1
  exit 77
fi
exec "$@"
