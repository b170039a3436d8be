#!/bin/sh
# Unit test: rpmspec parses trimd.spec and it uses the systemd scriptlets.
# Exit 77 (skipped) without rpmspec (Debian package "rpm"), a failure under
# CI=true.
spec=$(dirname "$0")/trimd.spec
. "$(dirname "$0")/../../tests/common/ci_rule.sh"
command -v rpmspec >/dev/null 2>&1 || skip_or_fail "rpmspec is not installed (Debian package rpm)"
parsed=$(rpmspec -P "$spec") || exit 1
for macro in '%systemd_post trimd.service' '%systemd_preun trimd.service' \
  '%systemd_postun_with_restart trimd.service'; do
  printf '%s\n' "$parsed" | grep -qF "$macro" || { echo "missing: $macro"; exit 1; }
done
# The journal catalog is packaged (systemd's file trigger indexes it).
printf '%s\n' "$parsed" | grep -qx '/usr/lib/systemd/catalog/trimd.catalog' || { echo "missing: the journal catalog"; exit 1; }
# The Cockpit page is a package of its own.
packages=$(rpmspec -q --qf '%{NAME}\n' "$spec" 2>/dev/null)
printf '%s\n' "$packages" | grep -qx 'trimd-cockpit' || { echo "no trimd-cockpit subpackage: $packages"; exit 1; }
# The version follows the project's.
version=$(rpmspec -q --qf '%{VERSION}\n' "$spec" 2>/dev/null | head -n 1)
[ "$version" = "$TRIMD_VERSION" ] || { echo "spec version $version, project $TRIMD_VERSION"; exit 1; }
echo "trimd.spec parses"
