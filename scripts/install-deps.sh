#!/bin/sh
# Install what trimd needs on Debian 12 (as root). The one list of packages:
#   sh scripts/install-deps.sh          build and run trimd and trimctl
#                                       (the README's run command)
#   sh scripts/install-deps.sh --test   also everything the tests, the bench
#                                       and the boot tier need (test-all.sh, CI)
set -eu

# Building trimd and trimctl; the libraries' runtime packages come with them.
# g++ and make, not build-essential: its dpkg-dev (and patch, xz-utils,
# bzip2) only the package build needs (--test, where dpkg-buildpackage
# checks for build-essential).
build_packages="
  g++ make cmake pkg-config
  libudev-dev libsystemd-dev libspdlog-dev libfmt-dev libtomlplusplus-dev
  nlohmann-json3-dev libcurl4-openssl-dev
  libsdbus-c++-dev libsdbus-c++-bin
"

# The test tiers: GoogleTest; real filesystems on loop devices (unit tests
# make none); a private dbus-daemon and udev; the bench's FUSE disk and
# charts; the boot tier's package build, Debian root and container; the RPM
# spec check; the libFuzzer targets; clang-format (scripts/check-format.sh)
# and flake8 (scripts/check-lint.sh; its eslint comes from npm, below); the
# fleet tier's etcd cluster and the certificates its TLS tests make; the
# browser tier's Cockpit and headless Chromium (axe-core comes from npm,
# below); gettext for the Cockpit page's translation template (cockpit_pot).
test_packages="
  libgtest-dev libgmock-dev
  util-linux mount e2fsprogs xfsprogs btrfs-progs
  dbus udev systemd
  libfuse3-dev fuse3 python3 python3-matplotlib fio
  build-essential debhelper dpkg-dev lintian debootstrap systemd-container
  rpm bash-completion ccache fdisk clang-format flake8 git gettext
  clang libclang-rt-14-dev
  prometheus
  etcd-server etcd-client openssl
  cockpit-ws cockpit-bridge chromium chromium-driver python3-selenium iproute2
"

case "${1:-}" in
  "") packages=$build_packages ;;
  --test) packages="$build_packages $test_packages" ;;
  *) echo "usage: $0 [--test]" >&2; exit 2 ;;
esac

export DEBIAN_FRONTEND=noninteractive
# No translated package descriptions: nothing here reads them.
apt-get update -q -o Acquire::Languages=none
# shellcheck disable=SC2086 # word splitting of the list is intended
apt-get install -y -q --no-install-recommends $packages

# From npm (no Debian package has them), at the versions their
# package-lock.json pins, kept out of the source tree; needs the machine's
# node and npm: axe-core, which the browser tier injects into the page
# (tests/browser/), and eslint for scripts/check-lint.sh (scripts/lint/).
npm_into() {
  mkdir -p "$2"
  cp "$1/package.json" "$1/package-lock.json" "$2/"
  (cd "$2" && npm ci --no-audit --no-fund --loglevel=error)
}
if [ "${1:-}" = --test ]; then
  top=$(dirname "$0")/..
  npm_into "$top/tests/browser" /var/cache/trimd-browser
  npm_into "$top/scripts/lint" /var/cache/trimd-lint
fi
