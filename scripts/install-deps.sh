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
# spec check; the libFuzzer targets; clang-format (scripts/check-format.sh);
# the fleet tier's etcd cluster and the certificates its TLS tests make;
# the browser tier's Cockpit and headless Chromium (axe-core comes from npm,
# below).
test_packages="
  libgtest-dev libgmock-dev
  util-linux mount e2fsprogs xfsprogs btrfs-progs
  dbus udev systemd
  libfuse3-dev fuse3 python3 python3-matplotlib fio
  build-essential debhelper dpkg-dev lintian debootstrap systemd-container
  rpm bash-completion ccache fdisk clang-format git
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

# The browser tier injects axe-core (npm; no Debian package has it) into the
# page: the version pinned by tests/browser/package-lock.json, kept out of
# the source tree. Needs the machine's node and npm.
if [ "${1:-}" = --test ]; then
  browser_cache=/var/cache/trimd-browser
  mkdir -p "$browser_cache"
  cp "$(dirname "$0")/../tests/browser/package.json" "$(dirname "$0")/../tests/browser/package-lock.json" \
    "$browser_cache/"
  (cd "$browser_cache" && npm ci --no-audit --no-fund --loglevel=error)
fi
