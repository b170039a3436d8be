#!/bin/sh
# Unit test: journalctl indexes trimd.catalog (in a scratch root, never the
# machine's catalog) and lists each of its entries with its subject.
# Exit 77 (skipped) without journalctl, a failure under CI=true.
catalog=$1
. "$(dirname "$0")/../tests/common/ci_rule.sh"
command -v journalctl >/dev/null 2>&1 ||
  skip_or_fail "journalctl is not installed (Debian package systemd)"
root=$(mktemp -d) || exit 1
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/lib/systemd/catalog"
cp "$catalog" "$root/usr/lib/systemd/catalog/trimd.catalog" || exit 1
journalctl --root="$root" --update-catalog || { echo "journalctl --update-catalog failed"; exit 1; }
listed=$(journalctl --root="$root" --list-catalog) || exit 1
expected=$(grep -c '^-- ' "$catalog")
got=$(printf '%s\n' "$listed" | grep ' trimd: .' | grep -vc ' trimd: n/a$')
[ "$got" -eq "$expected" ] || {
  echo "journalctl lists $got entries with a subject, trimd.catalog has $expected:"
  printf '%s\n' "$listed"
  exit 1
}
echo "journalctl indexes all $expected entries of trimd.catalog"
