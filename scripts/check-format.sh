#!/bin/bash
# Every C++ file git tracks (and every new one not yet added) must be as
# clang-format writes it (.clang-format at the top, bench/.clang-format for
# the bench; clang-format 14 on Debian 12):
#   scripts/check-format.sh          check, and name each file that differs
#   scripts/check-format.sh --fix    rewrite them in place
# The tree was formatted whole once (.git-blame-ignore-revs names that
# commit, so `git blame` can skip it).
set -euo pipefail

mode=(--dry-run -Werror)
if [ "${1:-}" = --fix ]; then
  mode=(-i)
fi

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

command -v clang-format >/dev/null || { echo "check-format: no clang-format" >&2; exit 2; }

mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.h')
[ "${#files[@]}" -gt 0 ] || { echo "check-format: no C++ file found" >&2; exit 2; }

present=()
for file in "${files[@]}"; do
  [ -f "$file" ] && present+=("$file")  # not one deleted in the work tree, not yet in the index
done
# Many files per clang-format, one per CPU: a whole-tree check in seconds.
status=0
printf '%s\0' "${present[@]}" |
  xargs -0 -n 40 -P "$(nproc)" clang-format "${mode[@]}" --style=file || status=1

if [ "$status" -ne 0 ]; then
  echo "check-format: the files above differ from .clang-format (scripts/check-format.sh --fix rewrites them)" >&2
else
  echo "check-format: ${#present[@]} C++ files follow .clang-format"
fi
exit "$status"
