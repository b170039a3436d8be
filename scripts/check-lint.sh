#!/bin/bash
# The tree's Python and JavaScript pass their linters (CI's check step, after
# scripts/check-format.sh):
#   flake8 (Debian's; .flake8) over every Python file git tracks (and every
#     new one not yet added): *.py and scripts whose #! names python;
#   eslint (npm, pinned in scripts/lint/package-lock.json and installed by
#     scripts/install-deps.sh --test into /var/cache/trimd-lint, or where
#     TRIMD_LINT_MODULES says; eslint.config.js) over the Cockpit page and its
#     node tests.
# Each finding is named with its file, line and rule; any finding fails.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
modules=${TRIMD_LINT_MODULES:-/var/cache/trimd-lint/node_modules}

command -v flake8 >/dev/null || { echo "check-lint: no flake8 (Debian's flake8)" >&2; exit 2; }
[ -x "$modules/.bin/eslint" ] || { echo "check-lint: no eslint in $modules (scripts/install-deps.sh --test)" >&2; exit 2; }
command -v node >/dev/null || { echo "check-lint: no node" >&2; exit 2; }

python_files=()
while IFS= read -r -d '' file; do
  [ -f "$file" ] || continue  # deleted in the work tree, not yet in the index
  first=
  case "$file" in
    *.py) python_files+=("$file") ;;
    *.*) ;;
    *) IFS= read -r first <"$file" || true
       [[ $first == '#!'*python* ]] && python_files+=("$file") ;;
  esac
done < <(git ls-files -z --cached --others --exclude-standard)
[ "${#python_files[@]}" -gt 0 ] || { echo "check-lint: no Python file found" >&2; exit 2; }

status=0
flake8 "${python_files[@]}" || status=1
NODE_PATH=$modules "$modules/.bin/eslint" --max-warnings 0 cockpit tests/browser eslint.config.js || status=1

if [ "$status" -ne 0 ]; then
  echo "check-lint: the findings above fail the check" >&2
else
  echo "check-lint: ${#python_files[@]} Python files pass flake8; the Cockpit page and its tests pass eslint"
fi
exit "$status"
