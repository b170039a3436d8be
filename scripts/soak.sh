#!/bin/bash
# The soak: the timing-sensitive tiers, N rounds, while both CPUs are kept
# busy, to find the tests that cry wolf on a loaded machine before CI does.
#
#   scripts/soak.sh [--rounds N] [-L REGEX] [-R REGEX] [-E REGEX] [--jobs N]
#                   [--workers N] [--nice N] [--timeout S] [--build DIR]
#
# Each round is one `ctest` over the chosen tests (default: the labels
# system, bus, fleet, browser and boot) with -j$(nproc) as CI runs it, while
# --workers (default: one per CPU) busy loops at nice --nice (default 0: the
# tests get no more CPU than the load does, as on a shared runner) keep the
# CPUs busy. The report, per test: runs, failures, and its slowest run
# against its ctest TIMEOUT (the margin left). Results and each round's
# ctest log go to BUILD/soak/<date>/. Needs what the tiers need (root,
# a build with tests and the bench on); starts udevd as test-all.sh does when
# none runs. The load and udevd are stopped on every way out, and each
# load worker is killed by `timeout` after --max-hours whatever happens.
# HACKING.md, "The soak", says when to run it.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
rounds=3
labels='^(system|bus|fleet|browser|boot)$'
include=
exclude=
jobs=$(nproc)
workers=$(nproc)
nice_level=0
timeout=900  # CI's ctest --timeout: the TIMEOUT of a test that sets none
build=$top/build
max_hours=12

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift ;;
    -L) labels=$2; shift ;;
    -R) include=$2; shift ;;
    -E) exclude=$2; shift ;;
    --jobs|-j) jobs=$2; shift ;;
    --workers) workers=$2; shift ;;
    --nice) nice_level=$2; shift ;;
    --timeout) timeout=$2; shift ;;
    --build) build=$(cd "$2" && pwd); shift ;;
    --max-hours) max_hours=$2; shift ;;
    -h|--help) usage ;;
    *) echo "soak: unknown option $1" >&2; usage ;;
  esac
  shift
done
[[ $rounds =~ ^[1-9][0-9]*$ && $workers =~ ^[0-9]+$ ]] || usage
[ -f "$build/CTestTestfile.cmake" ] || { echo "soak: no ctest tree in $build" >&2; exit 2; }

out=$build/soak/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
select=(-L "$labels")
[ -z "$include" ] || select+=(-R "$include")
[ -z "$exclude" ] || select+=(-E "$exclude")

load_pids=()
udevd_pid=
ctest_pid=
stop_all() {
  local pid
  if [ -n "$ctest_pid" ]; then  # ctest ends its running tests on SIGTERM
    kill -TERM "$ctest_pid" 2>/dev/null || true
    wait "$ctest_pid" 2>/dev/null || true
    ctest_pid=
    # It kills them outright: a fixture tier (boot, browser) cut short in
    # its setup or a check leaves its container or browser running, with
    # its undo steps in its ledger. Its cleanup test runs them (alone: -FS
    # keeps ctest from adding the setup).
    ctest --test-dir "$build" -L "$labels" -R '_cleanup$' -FS '.*' >"$out/cleanup.log" 2>&1 || true
  fi
  for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${load_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  load_pids=()
  if [ -n "$udevd_pid" ]; then
    kill "$udevd_pid" 2>/dev/null || true
    wait "$udevd_pid" 2>/dev/null || true
    udevd_pid=
  fi
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# System tests watch udev events (scripts/test-all.sh does the same).
if ! pgrep -x systemd-udevd >/dev/null; then
  /lib/systemd/systemd-udevd 2>"$out/udevd.log" &
  udevd_pid=$!
  # Its control socket appears once it is up: ping until it answers (10 s at most).
  for ((try = 0; try < 100; try++)); do
    udevadm control --ping 2>/dev/null && break
    sleep 0.1
  done
  udevadm trigger --subsystem-match=block --sysname-match='loop*' --action=add || true
  udevadm settle || true
fi

# What each test may take: its TIMEOUT, for the margins.
ctest --test-dir "$build" "${select[@]}" --show-only=json-v1 >"$out/tests.json"

# Each worker dies with this script however it ends (SIGKILL included: the
# parent-death signal of setpriv, on timeout and on the loop under it), and
# after --max-hours whatever happens.
for ((i = 0; i < workers; i++)); do
  setpriv --pdeathsig KILL nice -n "$nice_level" timeout -s KILL "${max_hours}h" \
    setpriv --pdeathsig KILL sh -c 'while :; do :; done' &
  load_pids+=($!)
done
echo "soak: $rounds round(s) of ctest ${select[*]} -j$jobs, load: $workers busy loop(s)" \
  "at nice $nice_level, results in $out"

started=$(date +%s)
for ((round = 1; round <= rounds; round++)); do
  round_start=$(date +%s)
  echo "soak: round $round of $rounds"
  # In the background, so that a signal to this script is handled at once.
  ctest --test-dir "$build" "${select[@]}" -j"$jobs" --timeout "$timeout" --output-on-failure \
    --output-junit "$out/round-$round.xml" >"$out/round-$round.log" 2>&1 &
  ctest_pid=$!
  wait "$ctest_pid" || true
  ctest_pid=
  tail -n 3 "$out/round-$round.log" | sed 's/^/  /'
  echo "  round $round took $(($(date +%s) - round_start)) s"
done
stop_all

python3 "$top/scripts/soak_report.py" --tests "$out/tests.json" --default-timeout "$timeout" \
  --load "$workers busy loop(s) at nice $nice_level on $(nproc) CPU(s)" \
  --seconds "$(($(date +%s) - started))" "$out"/round-*.xml | tee "$out/report.txt"
