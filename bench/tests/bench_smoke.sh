#!/usr/bin/env bash
# Smoke test of the benchmark harness: `bench/run --quick` end to end (every
# workload's code path on tiny images, no assertion on speed), then a run
# interrupted with SIGINT in the middle of a configuration. Both must leave
# nothing mounted, attached or running. Needs root; exits 77 (skip) without,
# unless CI=true.
#
# Usage: bench_smoke.sh BUILD_DIR    (with daemon/trimd and bench/slowtrim built)
set -euo pipefail

build=${1:?usage: bench_smoke.sh BUILD_DIR}
bench=$(cd "$(dirname "$0")/.." && pwd)

smoke_name=bench_smoke
# shellcheck source=bench/tests/smoke_lib.sh
source "$(dirname "$0")/smoke_lib.sh"
require_capabilities losetup mkfs.ext4 mkfs.xfs fstrim mount umount /usr/bin/python3 fio sfdisk partx etcd
for binary in daemon/trimd bench/slowtrim bench/fleet_sim; do
    [[ -x $build/$binary ]] || fail "no $build/$binary (build the trimd, slowtrim and fleet_sim targets)"
done
charts=1
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || charts=
[[ -n $charts ]] || ! running_under_ci || fail "python3-matplotlib missing (CI=true)"

out=$(mktemp -d /tmp/bench-smoke.XXXXXX)
bench_pid=
cleanup() {
    local rc=$?
    [[ -z $bench_pid ]] || kill -TERM "$bench_pid" 2>/dev/null || true
    [[ -z $bench_pid ]] || wait "$bench_pid" 2>/dev/null || true
    rm -rf "$out"
    exit "$rc"
}
trap cleanup EXIT

expect() {  # expect DESCRIPTION TEST...
    local what=$1
    shift
    "$@" || fail "$what"
    say "ok: $what"
}

lacks() { ! grep -q "$1" "$2"; }

# Mounts and loop devices of the harness: its work dirs are trimd-bench.*.
ours_mounted() { grep -q 'trimd-bench\.' /proc/self/mountinfo; }
ours_attached() { grep -qs 'trimd-bench\.' /sys/block/loop*/loop/backing_file; }
ours_etcd() { pgrep -f 'etcd --name=(w5|m[0-9]) --data-dir=.*trimd-bench\.' >/dev/null; }
nothing_left() {
    ! ours_mounted && ! ours_attached && ! pgrep -f "$bench/probe.py" >/dev/null && ! ours_etcd
}

expect "no harness leftovers before the test" nothing_left

start=$SECONDS
status=0
"$bench/run" --quick --build "$build" --out "$out/full" >"$out/full.log" 2>&1 || status=$?
say "bench/run --quick took $((SECONDS - start)) s"
if [[ $status -ne 0 ]]; then
    tail -n 40 "$out/full.log" >&2
    fail "bench/run --quick exited with $status"
fi
report=$out/full/report.md
expect "report.md written" test -s "$report"
for section in "## Targets" "## W1: delete storm" "## W2: trim under load" \
    "## W3: idle throughput" "## W4: footprint" "## FIO: real foregrounds" "## W5: trim storm" \
    "### The duty budget" "## W6: the fleet at scale" "## Harness checks"; do
    expect "report has '$section'" grep -qF "$section" "$report"
done
if grep "not measured" "$report" >&2; then  # the lines above say which and why
    fail "every target has a verdict"
fi
say "ok: every target has a verdict"
expect "no harness check failed" lacks FAILED "$report"
expect "ratios to the baselines are reported" grep -q '×' "$report"
expect "W1 btrfs judges trimd by an fstrim on its own mount after the pass" \
    grep -qF "btrfs: allocation after trimd's pass vs an fstrim on its mount" "$report"
expect "results.json parses" /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" \
    "$out/full/results.json"
if [[ -n $charts ]]; then
    for png in w1_ext4 w1_xfs w2_latency w3_pass w4_footprint w5_backend w5_latency w5_duty; do
        expect "$png.png drawn" test -s "$out/full/$png.png"
    done
fi
expect "nothing left mounted, attached or running" nothing_left

# The other device models, briefly: W3 (an idle pass, fstrim beside it).
for model in queued thin; do
    "$bench/run" --quick --workloads W3 --model $model --build "$build" --out "$out/$model" \
        >"$out/$model.log" 2>&1 || { tail -n 40 "$out/$model.log" >&2; fail "bench/run --model $model failed"; }
    expect "the $model report names its model" grep -q "slowtrim's $model model" "$out/$model/report.md"
    if grep "not measured" "$out/$model/report.md" >&2; then
        fail "every $model target has a verdict"
    fi
    expect "no $model harness check failed" lacks FAILED "$out/$model/report.md"
done
expect "nothing left mounted, attached or running after the models" nothing_left

# A second sitting (--add): W4 joins the thin run's W3 in one report; a
# sitting measured differently is refused before it runs. --add vouches only
# for committed harness code, so a work tree with changes in bench/ skips it.
if [[ -n $(git -c safe.directory='*' -C "$bench" status --porcelain -- . ':(exclude)*.md' 2>/dev/null || echo unknown) ]] &&
    ! running_under_ci; then
    say "skip --add: bench/ has uncommitted changes"
else
    "$bench/run" --quick --workloads W4 --model thin --add --build "$build" --out "$out/thin" \
        >"$out/add.log" 2>&1 || { tail -n 40 "$out/add.log" >&2; fail "bench/run --add failed"; }
    for section in "## W3: idle throughput" "## W4: footprint"; do
        expect "the two sittings' report has '$section'" grep -qF "$section" "$out/thin/report.md"
    done
    expect "the report says it was measured in 2 sittings" grep -q "in 2 sittings" "$out/thin/report.md"
    status=0
    "$bench/run" --quick --workloads W4 --model queued --add --build "$build" --out "$out/thin" \
        >"$out/refused.log" 2>&1 || status=$?
    expect "a sitting on another model is refused (exit $status)" test "$status" -eq 1
    expect "the refusal names what differs" grep -q "measured with different params" "$out/refused.log"
    expect "the refused sitting ran nothing" lacks "=== W4" "$out/refused.log"
fi

# Ctrl-C in the middle of a configuration (slowtrim and a filesystem up).
"$bench/run" --quick --workloads W2 --build "$build" --out "$out/int" >"$out/int.log" 2>&1 &
bench_pid=$!
deadline=$((SECONDS + 60))
until grep -q 'trimd-bench\..*/mnt/w2 ' /proc/self/mountinfo; do
    ((SECONDS < deadline)) || fail "W2 never mounted its filesystem"
    kill -0 "$bench_pid" 2>/dev/null || fail "bench/run exited early"
    sleep 0.1
done
sleep 1
kill -INT "$bench_pid"
status=0
wait "$bench_pid" || status=$?
bench_pid=
expect "an interrupted run exits with 130 (was $status)" test "$status" -eq 130
expect "the interrupted run tore everything down" nothing_left
say "PASS"
