#!/bin/bash
# The C++ lines changed since a baseline must be as clang-format (.clang-format,
# clang-format 14 on Debian 12) writes them:
#   scripts/check-format.sh            lines changed since the baseline below
#   scripts/check-format.sh BASE       lines changed since commit BASE
# Only changed lines are held to the style, so that a change never has to
# reformat code it did not touch (the tree predates .clang-format; about 1900
# of its lines differ). The baseline is a commit of main recorded here, so a
# clean clone of main checks everything landed since then; a clone without it
# (too shallow) is an error, not a silent pass.
set -euo pipefail

baseline=1caa7476ec7906bb8510b987916a53b119200ffe  # main when .clang-format came
base=${1:-${FORMAT_BASE:-$baseline}}

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

command -v clang-format >/dev/null || { echo "check-format: no clang-format" >&2; exit 2; }
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "check-format: commit $base is not in this clone (fetch more history)" >&2
  exit 2
fi

# --lines=FIRST:LAST for each hunk of `git diff -U0` in one file (the new side).
changed_line_ranges() {
  git diff -U0 --no-color "$base" -- "$1" |
    sed -n 's/^@@ -[0-9,]* +\([0-9]*\)\(,\([0-9]*\)\)\{0,1\} @@.*/\1 \3/p' |
    while read -r first count; do
      count=${count:-1}
      [ "$count" -gt 0 ] && echo "--lines=$first:$((first + count - 1))"
    done
}

status=0
checked=0
while IFS= read -r -d '' file; do
  [ -f "$file" ] || continue  # deleted since the baseline
  mapfile -t ranges < <(changed_line_ranges "$file")
  [ "${#ranges[@]}" -gt 0 ] || continue
  checked=$((checked + 1))
  clang-format --dry-run -Werror --style=file "${ranges[@]}" "$file" || status=1
done < <(git diff -z --name-only --diff-filter=d "$base" -- '*.cpp' '*.hpp' '*.h')

if [ "$status" -ne 0 ]; then
  echo "check-format: changed lines above differ from .clang-format (git clang-format --extensions cpp,hpp,h $base fixes them)" >&2
else
  echo "check-format: $checked changed C++ files since ${base:0:12} follow .clang-format"
fi
exit "$status"
