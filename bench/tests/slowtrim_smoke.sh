#!/usr/bin/env bash
# Smoke test of slowtrim, the emulated slow-TRIM SSD: ext4 on a loop device
# on slowtrim's disk; write files, delete half, fstrim; then slowtrim's
# counters must add up and the backing file must have lost the space.
# MODEL picks slowtrim's device model; a writer runs beside fstrim, so every
# model serves discards and writes at once. (Whether a write waits for a
# discard is checked in test_slow_disk: through a loop device, the loop
# driver's one worker already serialises them, measured 25 us waited inside
# slowtrim for 52 writes even on the exclusive model.)
# Needs root. Exits 77 (skip) without, unless CI=true.
#
# Usage: slowtrim_smoke.sh PATH_TO_SLOWTRIM [exclusive|queued|thin]
set -euo pipefail

slowtrim=${1:?usage: slowtrim_smoke.sh PATH_TO_SLOWTRIM [MODEL]}
model=${2:-exclusive}
case $model in
exclusive | queued) latency_ms=2 cost=(--discard-latency=2 --per-mib=0.1) ;;
thin) latency_ms=0 cost=() ;;  # slowtrim's own thin cost: 0.05 ms a discard
*) echo "unknown model $model" >&2; exit 2 ;;
esac
file_count=200
file_kib=512

smoke_name="slowtrim_smoke ($model)"
# shellcheck source=bench/tests/smoke_lib.sh
source "$(dirname "$0")/smoke_lib.sh"
require_capabilities losetup mkfs.ext4 fstrim mount umount mountpoint

work=$(mktemp -d /var/tmp/slowtrim-smoke.XXXXXX)
backing=$work/backing
fuse_dir=$work/fuse
fs_dir=$work/fs
stats=$work/stats.json
mkdir "$fuse_dir" "$fs_dir"
slowtrim_pid=
loop=
fs_mounted=

wait_until() {  # wait_until SECONDS COMMAND...: poll until COMMAND succeeds
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}

loop_detached() { [[ ! -e /sys/block/${loop#/dev/}/loop/backing_file ]]; }

# Tears down in the only order that works: fs, loop, then the FUSE daemon
# (a loop still attached keeps the FUSE file busy).
cleanup() {
    local rc=$?
    set +e
    [[ -n $fs_mounted ]] && umount "$fs_dir"
    if [[ -n $loop ]]; then
        losetup -d "$loop"
        wait_until 10 loop_detached || say "warning: $loop still attached"
    fi
    if [[ -n $slowtrim_pid ]]; then
        kill -TERM "$slowtrim_pid" 2>/dev/null
        wait "$slowtrim_pid"
    fi
    mountpoint -q "$fuse_dir" && umount -l "$fuse_dir"
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'say "FAIL: line $LINENO: $BASH_COMMAND"' ERR

stat_of() { [[ ! -e $stats ]] || sed -n "s/^  \"$1\": \([0-9a-z]*\).*/\1/p" "$stats"; }
allocated() { echo $(($(stat -c %b "$backing") * 512)); }

# Asks slowtrim for a fresh stats file and waits until it is there.
snapshot() {
    local before
    before=$(stat_of sequence)
    kill -USR1 "$slowtrim_pid"
    wait_until 5 eval '[[ $(stat_of sequence) != "$before" ]]' || fail "no stats after SIGUSR1"
}

expect() {  # expect DESCRIPTION TEST...
    local what=$1
    shift
    "$@" || fail "$what"
    say "ok: $what"
}

exit_line_matches_stats() {  # every key=value of the line as in the JSON
    local pair
    [[ $1 == discards=* ]] || return 1
    for pair in $1; do
        [[ $(stat_of "${pair%%=*}") == "${pair#*=}" ]] || return 1
    done
}

truncate -s 256M "$backing"
"$slowtrim" --model="$model" "${cost[@]}" --stats="$stats" --stats-interval=0 \
    "$backing" "$fuse_dir" >"$work/stdout" 2>"$work/stderr" &
slowtrim_pid=$!
wait_until 10 test -e "$fuse_dir/disk" || { cat "$work/stderr" >&2; fail "slowtrim did not mount"; }
[[ $(stat -c %s "$fuse_dir/disk") == $(stat -c %s "$backing") ]] || fail "disk size differs from backing file"

loop=$(losetup --find --show --direct-io=off "$fuse_dir/disk")
discard_max=$(cat "/sys/block/${loop#/dev/}/queue/discard_max_bytes")
expect "$loop passes discards (discard_max_bytes=$discard_max)" test "$discard_max" -gt 0

mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
mount "$loop" "$fs_dir"
fs_mounted=1
head -c $((file_kib * 1024)) /dev/urandom >"$work/chunk"
for ((i = 0; i < file_count; i++)); do cp "$work/chunk" "$fs_dir/f$i"; done
sync
for ((i = 0; i < file_count; i += 2)); do rm "$fs_dir/f$i"; done
sync
deleted=$((file_count / 2 * file_kib * 1024))

snapshot
alloc_before=$(allocated)
discards_before=$(stat_of discards)
discarded_before=$(stat_of bytes_discarded)
unmapped_before=$(stat_of bytes_unmapped)
writes_before=$(stat_of writes)
io_wait_before=$(stat_of io_wait_ns)
fstrim "$fs_dir" &
fstrim_pid=$!
# One 4 KiB write + fdatasync after another while fstrim runs.
while kill -0 "$fstrim_pid" 2>/dev/null; do
    dd if="$work/chunk" of="$fs_dir/writer" bs=4k count=1 conv=fdatasync,notrunc status=none
done
wait "$fstrim_pid"
snapshot
alloc_after=$(allocated)
writes=$(($(stat_of writes) - writes_before))
io_wait_us=$((($(stat_of io_wait_ns) - io_wait_before) / 1000))
say "writer beside fstrim: $writes writes waited $io_wait_us us for the disk in all"

discards=$(($(stat_of discards) - discards_before))
discarded=$(($(stat_of bytes_discarded) - discarded_before))
unmapped=$(($(stat_of bytes_unmapped) - unmapped_before))
dropped=$((alloc_before - alloc_after))
slack=$((1024 * 1024))
say "fstrim: $discards discards, $discarded bytes discarded, $unmapped unmapped, backing dropped $dropped"

expect "fstrim sent discards" test "$discards" -gt 0
expect "fstrim discarded bytes" test "$discarded" -gt 0
expect "backing file lost at least 90% of the $deleted bytes deleted" test "$dropped" -ge $((deleted * 9 / 10))
expect "bytes_unmapped matches the backing file's drop" test $((unmapped - dropped)) -le $slack -a $((dropped - unmapped)) -le $slack
expect "no more unmapped than discarded" test "$unmapped" -le "$discarded"
expect "discard_ns covers discards x latency" test "$(stat_of discard_ns)" -ge $(($(stat_of discards) * latency_ms * 1000000))
expect "the writer ran beside fstrim" test "$writes" -gt 0
if [[ $model == thin ]]; then
    # 0.05 ms each beyond the real punch (which the host's filesystem
    # times: up to 5 ms on ext4): far below the 2 ms of the others.
    expect "thin discards cost little beyond the punch (under 1 ms each)" \
        test $(($(stat_of discard_ns) - $(stat_of punch_ns))) -lt $(($(stat_of discards) * 1000000))
fi
expect "punch_ns is part of discard_ns" test "$(stat_of punch_ns)" -le "$(stat_of discard_ns)"
expect "no I/O errors" test "$(stat_of errors)" -eq 0
expect "writes were counted" test "$(stat_of bytes_written)" -ge $((file_count * file_kib * 1024))

umount "$fs_dir"
fs_mounted=
losetup -d "$loop"
wait_until 10 loop_detached || fail "$loop did not detach"
loop=
# SIGINT, not SIGTERM: bash starts background jobs with SIGINT ignored.
kill -INT "$slowtrim_pid"
status=0
wait "$slowtrim_pid" || status=$?
slowtrim_pid=
expect "slowtrim exits 0 on SIGINT, even as a background job" test "$status" -eq 0
expect "slowtrim unmounted its filesystem" eval '! mountpoint -q "$fuse_dir"'
expect "the last stats file is final" test "$(stat_of final)" = true
expect "the exit line agrees with the stats file" exit_line_matches_stats "$(cat "$work/stdout")"
say "PASS"
