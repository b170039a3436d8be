#!/bin/bash
# The C++ lines changed since a baseline must be as clang-format (.clang-format,
# clang-format 14 on Debian 12) writes them:
#   scripts/check-format.sh            lines changed since the baseline below
#   scripts/check-format.sh BASE       lines changed since commit BASE
#   scripts/check-format.sh --fix [BASE]   rewrite those lines in place
# Only changed lines are held to the style, so that a change never has to
# reformat code it did not touch (the tree predates .clang-format; about 1900
# of its lines differ). The baseline is a commit of main recorded here, so a
# clean clone of main checks everything landed since then; a clone without it
# (too shallow) is an error, not a silent pass.
set -euo pipefail

baseline=1caa7476ec7906bb8510b987916a53b119200ffe  # main when .clang-format came
mode=(--dry-run -Werror)
if [ "${1:-}" = --fix ]; then
  mode=(-i)
  shift
fi
base=${1:-${FORMAT_BASE:-$baseline}}

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

command -v clang-format >/dev/null || { echo "check-format: no clang-format" >&2; exit 2; }
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "check-format: commit $base is not in this clone (fetch more history)" >&2
  exit 2
fi

# "FILE --lines=FIRST:LAST ..." for each C++ file changed since the base, from
# one `git diff -M -U0`: with rename detection, so a file moved to another
# folder is held to the style only where its lines changed.
changed_line_ranges() {
  git diff -M -U0 --no-color --diff-filter=d "$base" -- '*.cpp' '*.hpp' '*.h' |
    awk '
      /^\+\+\+ b\// { if (file != "" && ranges != "") print file ranges; file = substr($0, 7); ranges = ""; next }
      /^@@ / {
        split($3, side, ",")
        first = substr(side[1], 2); count = (length(side) > 1) ? side[2] : 1
        if (count > 0) ranges = ranges " --lines=" first ":" (first + count - 1)
      }
      END { if (file != "" && ranges != "") print file ranges }'
}

# Files git does not track yet are new in every line (a clean clone has
# none; a working tree before `git add` does).
untracked_files() {
  git ls-files --others --exclude-standard -- '*.cpp' '*.hpp' '*.h'
}

status=0
checked=0
while read -r file; do
  checked=$((checked + 1))
  clang-format "${mode[@]}" --style=file "$file" || status=1
done < <(untracked_files)
while read -r file ranges; do
  [ -f "$file" ] || continue
  checked=$((checked + 1))
  # shellcheck disable=SC2086 # one argument per range is intended
  clang-format "${mode[@]}" --style=file $ranges "$file" || status=1
done < <(changed_line_ranges)

if [ "$status" -ne 0 ]; then
  echo "check-format: changed lines above differ from .clang-format (scripts/check-format.sh --fix $base rewrites them)" >&2
else
  echo "check-format: $checked changed C++ files since ${base:0:12} follow .clang-format"
fi
exit "$status"
