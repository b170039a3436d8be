#!/bin/bash
# Install, build and run the whole test suite (as root), the way CI does:
#   1. a -Werror build; every test (unit, bus, system) against it;
#   2. an AddressSanitizer + UBSan build; the unit tests against it;
#   3. the libFuzzer targets (clang, ASan + UBSan), each for FUZZ_SECONDS
#      (default here 30) on its seed corpus.
# The boot tier (label boot) is part of step 1: it builds the .deb and boots
# it in a Debian 12 container (tests/boot/).
# Before building: every C++ file follows .clang-format (scripts/check-format.sh),
# the Python passes flake8 and the Cockpit page eslint (scripts/check-lint.sh).
# Under CI=true a system test that lacks root, a loop device or a tool fails
# instead of skipping.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

[ "${TRIMD_SKIP_DEPS:-0}" = 1 ] || sh scripts/install-deps.sh --test

scripts/check-format.sh
scripts/check-lint.sh

jobs=$(nproc)
# Tests and bench explicitly on: the README's run command may have configured
# this build directory without them.
cmake -S . -B build -DTRIMD_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTRIMD_BUILD_TESTS=ON -DTRIMD_BUILD_BENCH=ON
cmake --build build -j "$jobs"
# Without the unity build: every source of lib/ must compile on its own.
cmake -S . -B build-asan -DTRIMD_WERROR=ON -DTRIMD_SANITIZE=ON -DTRIMD_BUILD_TESTS=ON \
  -DTRIMD_BUILD_BENCH=OFF -DTRIMD_UNITY_BUILD=OFF \
  -DCMAKE_BUILD_TYPE=Debug
# Only what the unit tests run: the sanitizers check the logic, not the tiers.
cmake --build build-asan -j "$jobs" --target unit_tests

# System tests watch udev events; there is no systemd as PID 1 in CI. A
# udevd this script starts is stopped when it ends, and only loop devices
# (the tests' own kind) are replayed to it, not every disk of the host.
if ! pgrep -x systemd-udevd >/dev/null; then
  /lib/systemd/systemd-udevd &
  udevd_pid=$!
  trap 'kill "$udevd_pid" 2>/dev/null; wait "$udevd_pid" 2>/dev/null || true' EXIT
  udevadm control --ping --timeout=10 || true
  udevadm trigger --subsystem-match=block --sysname-match='loop*' --action=add || true
  udevadm settle || true
fi

# The boot tier's .deb is a third build of the whole tree. It is built
# beside the tests from here on, at idle priority (SCHED_IDLE: only the CPU
# the tests leave, and most of the system tier waits on devices), and the
# boot tier runs last, in a ctest of its own: ctest starts the longest chain
# of DEPENDS first, which is the boot tier's, and its setup (RUN_SERIAL)
# would hold every other test while it waits for the .deb. The tier takes
# the .deb from here (tests/boot/test_boot.py), or builds its own if this
# one failed.
deb_dir=$(mktemp -d /var/tmp/trimd-ci-deb.XXXXXX)
# Its own session, so that a failing run stops the whole build with it.
chrt --idle 0 setsid bash -c 'bash tests/boot/build_deb.sh "$1" "$2" >"$2/build.log" 2>&1 &&
  touch "$2/ok" || touch "$2/failed"' deb-build "$top" "$deb_dir" &
deb_pid=$!
stop_deb_build() {
  kill -- "-$deb_pid" 2>/dev/null || true
  wait "$deb_pid" 2>/dev/null || true
  rm -rf "$deb_dir"
}
trap 'stop_deb_build; [ -z "${udevd_pid:-}" ] || { kill "$udevd_pid" 2>/dev/null; wait "$udevd_pid" 2>/dev/null || true; }' EXIT
export TRIMD_PREBUILT_DEB_DIR=$deb_dir

ctest --test-dir build-asan -L unit --output-on-failure -j "$jobs"
FUZZ_SECONDS=${FUZZ_SECONDS:-30} scripts/fuzz.sh

# Every tier but boot, then boot; a failure in the first still runs the
# second, and either fails the run.
status=0
ctest --test-dir build --output-on-failure --timeout 900 -j "$jobs" -LE '^boot$' || status=$?
ctest --test-dir build --output-on-failure --timeout 900 -j "$jobs" -L '^boot$' || status=$?
exit "$status"
