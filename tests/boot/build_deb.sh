#!/bin/bash
# Build trimd's .deb from the committed-or-not source tree, the way
# packaging/README.md says, in a scratch copy (the tree stays clean).
#   build_deb.sh SOURCE_DIR OUT_DIR   -> OUT_DIR/trimd_*.deb, OUT_DIR/trimd-cockpit_*.deb
# Unit tests are not run again here (DEB_BUILD_OPTIONS=nocheck): the unit
# tier runs them. ccache speeds up rebuilds when installed.
set -euo pipefail
src=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
# A fixed place, not mktemp: ccache keys -g builds on the directory, so
# rebuilds hit only from the same path. flock: one build at a time.
work=/var/tmp/trimd-deb-build
exec 9>/var/tmp/trimd-deb-build.lock
flock 9
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

# The tracked files and new ones, without build trees or VCS data.
tar -C "$src" --exclude-vcs --exclude='./build*' --exclude='./obj-*' --exclude='./debian' \
  -cf - . | tar -C "$work" -xf -
mkdir -p "$work/trimd"
shopt -s dotglob
for entry in "$work"/*; do [ "$entry" = "$work/trimd" ] || mv "$entry" "$work/trimd/"; done
ln -s packaging/debian "$work/trimd/debian"

[ -d /usr/lib/ccache ] && export PATH=/usr/lib/ccache:$PATH
(cd "$work/trimd" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b)
cp "$work"/trimd_*.deb "$work"/trimd-cockpit_*.deb "$out"/
ls "$out"/trimd_*.deb "$out"/trimd-cockpit_*.deb
