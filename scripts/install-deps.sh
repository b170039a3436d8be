#!/bin/sh
# Install everything trimd needs to build, run and test on Debian 12 (as root).
# The one list of packages: the README's commands and .ci/run use it.
# prometheus: only for promtool, which the metrics tests run.
set -eu

packages="
  build-essential cmake pkg-config
  libudev-dev libsystemd-dev libspdlog-dev libfmt-dev libtomlplusplus-dev
  libsdbus-c++-dev libsdbus-c++-bin libfuse3-dev
  libgtest-dev libgmock-dev
  util-linux mount e2fsprogs xfsprogs btrfs-progs fuse3
  dbus udev systemd
  python3 python3-matplotlib
  clang libclang-rt-14-dev
  prometheus
"

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086 # word splitting of the list is intended
apt-get install -y -q --no-install-recommends $packages
