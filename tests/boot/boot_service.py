"""The boot tier's checks of trimd.service itself under systemd: notify
readiness and the watchdog, an umount in the middle of a chunk, the
takeover of a discard mount, reload and restart, fstrim.service, D-Bus
activation, the journal, trim --wait, polkit, and a stop mid-pass. Each is
the ctest test boot_<name> (boot_context.py says what a check may assume)."""

import json
import os
import threading
import time
import tomllib

from boot_context import (INSTALLED_RULE, PASS_CONFIG, SLOWTRIM, TAKEOVER, TRIMTEST, check,
                          ensure_running, grant_trimd_group, journal, show, trimctl_json)
from boot_root import message_id, run, wait_for

PASS_FINISHED_ID = message_id("PassFinished")  # lib/base/event_ids.def, trimd(8)
RELOAD_FAILED_ID = message_id("ReloadFailed")
CONFIG_RELOADED_ID = message_id("ConfigReloaded")


@check
def check_boot(session, checks):
    state = session.handle["booted"]
    checks.check(state in ("running", "degraded"), f"container booted ({state})")
    box = session.box
    ensure_running(box)
    props = show(box, "trimd.service", "ActiveState", "Type", "StatusText", "WatchdogUSec")
    checks.check(props.get("ActiveState") == "active" and props.get("Type") == "notify",
                 "trimd.service active after boot, Type=notify", str(props))
    checks.check(bool(props.get("StatusText")), f"STATUS= set: {props.get('StatusText')!r}")
    print(box.sh("systemctl status --no-pager trimd.service", check=False).stdout)


@check
def check_watchdog(session, checks):
    """Keep-alives arrive: systemd's WatchdogTimestamp (the last WATCHDOG=1)
    moves on past one WatchdogSec=3s with the same process, never restarted."""
    box = session.box
    ensure_running(box)
    props = ("MainPID", "NRestarts", "ActiveState", "WatchdogUSec", "WatchdogTimestampMonotonic")
    before = show(box, "trimd.service", *props)
    first = int(before.get("WatchdogTimestampMonotonic") or 0)

    def pinged_past_one_period():
        now = show(box, "trimd.service", *props)
        return now if int(now.get("WatchdogTimestampMonotonic") or 0) - first > 3_000_000 else None

    after = wait_for(pinged_past_one_period, 15, step=0.5) or show(box, "trimd.service", *props)
    checks.check(before.get("WatchdogUSec") == "3s" and first > 0
                 and int(after.get("WatchdogTimestampMonotonic") or 0) - first > 3_000_000
                 and after.get("ActiveState") == "active"
                 and after.get("MainPID") == before.get("MainPID")
                 and after.get("NRestarts") == before.get("NRestarts"),
                 "watchdog: keep-alives arrive for longer than WatchdogSec=3s, no restart",
                 f"{before} {after}")


STOP_WAIT_MS = 6000  # half the slow chunk's 12 s
FITRIM_REQUEST = "0xc0185879"  # _IOWR('X', 121, struct fstrim_range), as /proc/PID/syscall shows it

# Inside the container, in one go so that nothing slow sits between seeing
# the chunk in FITRIM and the umount: the runner (a child of trimd) found in
# ioctl(FITRIM) as soon as the pass begins (its one chunk takes about 12 s),
# the umount timed, then the runner's end awaited for @STOP_WAIT_MS@ ms at
# most: half what the chunk needs by itself, so a runner gone by then was
# stopped by trimd, however loaded the machine.
UMOUNT_MID_CHUNK = r"""
trimd=$(systemctl show -p MainPID --value trimd.service)
# /proc/PID/syscall says "running" while the task is on a CPU (ext4 scans
# its bitmaps between discards): look again then.
in_fitrim() {
  task=$1
  for try in $(seq 50); do
    set -- $(cat /proc/$task/syscall 2>/dev/null)
    [ "$1" = running ] || { [ "$1" = 16 ] && [ "$3" = @FITRIM@ ]; return; }
    sleep 0.002
  done
  return 1
}
alive() { [ -r /proc/$1/status ] && ! grep -q '^State:[[:space:]]*Z' /proc/$1/status; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
runner=
for i in $(seq 600); do
  for child in $(cat /proc/$trimd/task/*/children 2>/dev/null); do
    in_fitrim $child && runner=$child
  done
  [ -n "$runner" ] && break
  sleep 0.05
done
[ -n "$runner" ] || { echo "found=no"; exit 0; }
in_fitrim $runner && before=yes || before=no
start=$(now_ms)
umount @MOUNT@ 2>&1; rc=$?
end=$(now_ms)
in_fitrim $runner && after=yes || after=no
gone=-1
while [ $(( $(now_ms) - end )) -lt @STOP_WAIT_MS@ ]; do
  alive $runner || { gone=$(( $(now_ms) - end )); break; }
  sleep 0.005
done
echo "found=yes in_fitrim_before=$before rc=$rc umount_ms=$((end - start))" \
     "in_fitrim_after=$after runner_gone_ms=$gone"
"""


@check
def check_umount_mid_chunk(session, checks):
    """Issue 16 item 8 under the real unit: the runner trims through a
    detached copy of the mount (open_tree, allowed by the unit's syscall
    filter), so an umount in the container's namespace, which propagates into
    trimd's, is not refused with EBUSY while the chunk is in the kernel.
    Once per boot: the umount takes SLOWTRIM away (and it must run before
    anything trims SLOWTRIM, such as fstrim.service)."""
    box = session.box
    ensure_running(box)
    before = show(box, "trimd.service", "MainPID", "NRestarts")
    box.sh(f"trimctl trim --ignore-idle {SLOWTRIM}")
    script = (UMOUNT_MID_CHUNK.replace("@FITRIM@", FITRIM_REQUEST).replace("@MOUNT@", SLOWTRIM)
              .replace("@STOP_WAIT_MS@", str(STOP_WAIT_MS)))
    out = box.sh(script, check=False, timeout=120).stdout
    print("umount mid-chunk: " + out.strip(), flush=True)
    got = dict(word.split("=", 1) for word in out.split() if "=" in word)
    if not checks.check(got.get("found") == "yes" and got.get("in_fitrim_before") == "yes",
                        "umount mid-chunk: trimd's runner is inside FITRIM on the slow device "
                        "before the umount", out):
        return
    checks.check(got.get("rc") == "0",
                 f"umount mid-chunk succeeds (no EBUSY) under trimd.service: exit {got.get('rc')} "
                 f"in {got.get('umount_ms')} ms (the chunk was still in FITRIM after it: "
                 f"{got.get('in_fitrim_after')})",
                 box.sh("journalctl --no-pager -u trimd.service -n 20", check=False).stdout)
    gone = int(got.get("runner_gone_ms", "-1"))
    checks.check(gone >= 0, f"trimd stopped the runner mid-chunk, {gone} ms after the umount "
                 f"(-1: not within {STOP_WAIT_MS} ms, half what the chunk needs by itself)")
    mounted = box.sh(f"findmnt -n {SLOWTRIM}", check=False).returncode == 0
    after = show(box, "trimd.service", "MainPID", "NRestarts", "ActiveState")
    alive = box.sh("trimctl status", check=False).returncode == 0
    checks.check(not mounted and after.get("ActiveState") == "active"
                 and after.get("MainPID") == before.get("MainPID")
                 and after.get("NRestarts") == before.get("NRestarts") and alive,
                 "trimd survives it: same process, active, answering trimctl status",
                 f"{before} {after} mounted={mounted}")


def has_discard(options):
    return any(o in ("discard", "discard=sync") for o in options)


def container_superblock_options(box, mount_point):
    """The superblock options as the container's own mount namespace (its
    PID 1's, not trimd's private one) sees them."""
    out = box.sh(f"findmnt -n -o FS-OPTIONS --mountpoint {mount_point}", check=False).stdout
    return out.strip().split(",")


class DiscardWatch:
    """Polls the host's view of a mount every 5 ms in a thread: did discard
    ever come back while it watched (a restart that flaps the mount)?"""

    def __init__(self, fs):
        self.fs = fs
        self.seen_discard = False
        self.samples = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll)

    def _poll(self):
        while not self.stop.is_set():
            if has_discard(self.fs.options()[1]):
                self.seen_discard = True
            self.samples += 1
            time.sleep(0.005)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


@check
def check_takeover(session, checks):
    """Taken over by the installed, sandboxed unit: seen outside trimd's
    mount namespace, kept across a restart, handed back on stop."""
    box, fs = session.box, session.inline
    ensure_running(box)
    vfs_before = fs.options()[0]
    gone = wait_for(lambda: not has_discard(fs.options()[1]), 20)
    checks.check(gone, "takeover: the host's mount lost discard (trimd remounted from its "
                 f"own namespace): {','.join(fs.options()[1])}")
    inside = container_superblock_options(box, TAKEOVER)
    checks.check(not has_discard(inside) and "rw" in inside,
                 f"takeover: the container's namespace sees it too: {','.join(inside)}")
    checks.check(fs.options()[0] == vfs_before,
                 f"takeover: per-mount options unchanged ({','.join(fs.options()[0])})")
    status = trimctl_json(box, TAKEOVER) or {}
    checks.check(status.get("takeover") == "taken-over",
                 f"trimctl status says taken over: {status.get('takeover')!r}", str(status))
    since = status.get("taken_over_since_usec")
    pid = show(box, "trimd.service", "MainPID")["MainPID"]

    def adopted_by_the_new_process():
        if show(box, "trimd.service", "MainPID")["MainPID"] == pid:
            return None
        now = trimctl_json(box, TAKEOVER) or {}
        return now if now.get("takeover") == "taken-over" else None

    with DiscardWatch(fs) as watch:
        restart = box.sh("systemctl restart trimd.service", check=False)
        after = wait_for(adopted_by_the_new_process, 20) or trimctl_json(box, TAKEOVER) or {}
    checks.check(restart.returncode == 0 and not watch.seen_discard
                 and after.get("takeover") == "taken-over"
                 and after.get("taken_over_since_usec") == since,
                 f"systemctl restart keeps the takeover: discard never came back in "
                 f"{watch.samples} looks, taken over since the same time", str(after))
    box.sh("systemctl stop trimd.service")
    handed_back = fs.options()[1]
    checks.check(has_discard(handed_back),
                 f"systemctl stop hands discard back: {','.join(handed_back)}")
    box.sh("systemctl start trimd.service")
    again = wait_for(lambda: not has_discard(fs.options()[1]), 20)
    checks.check(again, "started again, trimd takes it over again")


@check
def check_reload_restart(session, checks):
    box = session.box
    ensure_running(box)
    pid = show(box, "trimd.service", "MainPID")["MainPID"]
    reload = box.sh("systemctl reload trimd.service", check=False)
    after = show(box, "trimd.service", "MainPID", "ActiveState")
    checks.check(reload.returncode == 0 and after["MainPID"] == pid
                 and after["ActiveState"] == "active",
                 "systemctl reload: same process, still active", reload.stdout + str(after))
    restart = box.sh("systemctl restart trimd.service", check=False)
    after = show(box, "trimd.service", "MainPID", "ActiveState")
    checks.check(restart.returncode == 0 and after["MainPID"] != pid
                 and after["ActiveState"] == "active",
                 "systemctl restart: a new process, active (notify readiness)",
                 restart.stdout + str(after))


@check
def check_fstrim(session, checks):
    box = session.box
    ensure_running(box)
    box.sh("systemctl start fstrim.service", check=False)
    skipped = show(box, "fstrim.service", "ExecMainStartTimestampMonotonic", "Result")
    checks.check(skipped.get("ExecMainStartTimestampMonotonic") == "0"
                 and skipped.get("Result") == "exec-condition",
                 "fstrim.service skipped (ExecCondition) while trimd runs", str(skipped))
    print(box.sh("journalctl --no-pager -u fstrim.service", check=False).stdout)
    box.sh("systemctl stop trimd.service")
    try:
        box.sh("systemctl start fstrim.service", check=False)
        ran = show(box, "fstrim.service", "ExecMainStartTimestampMonotonic")
        checks.check(ran.get("ExecMainStartTimestampMonotonic", "0") != "0",
                     "fstrim.service runs again once trimd is stopped", str(ran))
    finally:
        ensure_running(box)


@check
def check_activation(session, checks):
    box = session.box
    box.sh("systemctl stop trimd.service")
    try:
        checks.check(show(box, "trimd.service", "ActiveState")["ActiveState"] != "active",
                     "trimd stopped before the activation check")
        call = box.sh("busctl call org.trimd.trimd1 /org/trimd/trimd1 "
                      "org.freedesktop.DBus.Peer Ping", check=False, timeout=60)
        state = show(box, "trimd.service", "ActiveState")["ActiveState"]
        checks.check(call.returncode == 0 and state == "active",
                     "D-Bus activation: a call to org.trimd.trimd1 started trimd.service",
                     call.stdout + state)
    finally:
        ensure_running(box)


@check
def check_journal(session, checks):
    """A failed reload is an error in the journal (native, priority 3); info
    lines keep priority 6. Each reload is awaited by its event (MESSAGE_ID)."""
    box = session.box
    ensure_running(box)
    config = box.root / "etc/trimd/trimd.toml"
    failed_before = len(journal(box, f"MESSAGE_ID={RELOAD_FAILED_ID}"))
    reloaded_before = len(journal(box, f"MESSAGE_ID={CONFIG_RELOADED_ID}"))
    try:
        config.write_text(PASS_CONFIG + "\n[trim\n")  # broken
        box.sh("systemctl kill -s HUP trimd.service")
        refused = wait_for(lambda: len(journal(box, f"MESSAGE_ID={RELOAD_FAILED_ID}"))
                           > failed_before, 15)
        checks.check(refused, "the broken policy's reload failed (its event is in the journal)")
    finally:
        config.write_text(PASS_CONFIG)
        box.sh("systemctl kill -s HUP trimd.service")
    reloaded = wait_for(lambda: len(journal(box, f"MESSAGE_ID={CONFIG_RELOADED_ID}"))
                        > reloaded_before, 15)
    checks.check(reloaded, "the good policy reloads (its event is in the journal)")
    warnings = box.sh("journalctl --no-pager -u trimd.service -p warning -o json").stdout.splitlines()
    entries = [json.loads(line) for line in warnings if line.strip()]
    native = [e for e in journal(box) if e.get("SYSLOG_IDENTIFIER") == "trimd"]
    checks.check(any(e.get("PRIORITY") == "3" and e.get("_TRANSPORT") == "journal" for e in entries),
                 "journalctl -u trimd -p warning shows the failed reload (priority 3, native)",
                 "\n".join(warnings[-5:]))
    checks.check(any(e.get("PRIORITY") == "6" for e in native)
                 and all(int(e.get("PRIORITY", "6")) <= 4 for e in entries),
                 "info lines keep priority 6 and stay out of -p warning")
    print(box.sh("journalctl --no-pager -u trimd.service -p warning", check=False).stdout)


def fill_and_free(fs):
    """Data written and deleted: blocks the backing file holds until trimmed."""
    data = fs.mount_point / "data"
    with open(data, "wb") as out:
        for _ in range(256):
            out.write(os.urandom(1 << 20))
        os.fsync(out.fileno())
    data.unlink()
    run(["sync", "-f", str(fs.mount_point)])


@check
def check_trim(session, checks):
    box, fs = session.box, session.fs
    ensure_running(box)
    fill_and_free(fs)
    status = wait_for(lambda: trimctl_json(box, TRIMTEST), 15)
    checks.check(status is not None, f"trimctl status lists {TRIMTEST}", str(status))
    before = fs.allocated_bytes()
    trim = box.sh(f"trimctl trim --wait --ignore-idle {TRIMTEST}", check=False, timeout=300)
    after = fs.allocated_bytes()
    checks.check(trim.returncode == 0 and after < before - (128 << 20),
                 f"trimctl trim --wait: backing file {before >> 20} MiB -> {after >> 20} MiB",
                 trim.stdout[-500:])


@check
def check_pass_in_journal(session, checks):
    """The journal answers "when was it last trimmed, and how much" by
    fields. Uses the pass check_trim made, or makes one when run alone."""
    box = session.box
    ensure_running(box)
    query = f"MESSAGE_ID={PASS_FINISHED_ID} MOUNT_POINT={TRIMTEST}"

    def finished_passes():
        return [e for e in journal(box, query)
                if e.get("RESULT") == "success" and int(e.get("BYTES", "0")) > 0
                and "DURATION_USEC" in e]

    if not finished_passes():
        fill_and_free(session.fs)
        box.sh(f"trimctl trim --wait --ignore-idle {TRIMTEST}", check=False, timeout=300)
    done = wait_for(finished_passes, 10, step=0.5)
    checks.check(bool(done), f"journalctl MESSAGE_ID=<pass finished> MOUNT_POINT={TRIMTEST}: "
                 f"{len(done or [])} successful pass(es) with BYTES and DURATION_USEC",
                 box.sh(f"journalctl --no-pager -o verbose -n 1 {query}", check=False).stdout)


@check
def check_polkit(session, checks):
    box = session.box
    ensure_running(box)
    pause = f"trimctl pause {TRIMTEST}"
    # Without the rule (another check may have installed it): polkit reloads its rules by itself.
    box.sh(f"rm -f {INSTALLED_RULE}")
    refused = wait_for(lambda: box.sh(pause, check=False, user="alice").returncode != 0, 15, 0.5)
    checks.check(refused, "a user who is not root is refused")
    grant_trimd_group(box)
    granted = wait_for(lambda: box.sh(pause, check=False, user="alice").returncode == 0, 15, 0.5)
    checks.check(granted, "the sample polkit rule grants the group trimd")
    box.sh(f"trimctl resume {TRIMTEST}")


@check
def check_stop_mid_pass(session, checks):
    box = session.box
    ensure_running(box)
    box.sh(f"trimctl trim --ignore-idle {TRIMTEST}")
    try:
        past_first_chunk = wait_for(
            lambda: (trimctl_json(box, TRIMTEST) or {}).get("progress", 0) > 0, 20)
        checks.check(past_first_chunk, "a pass is running, past its first chunk, before the stop",
                     str(trimctl_json(box, TRIMTEST)))
        start = time.monotonic()
        box.sh("systemctl stop trimd.service")
        elapsed = time.monotonic() - start
        checks.check(elapsed < 2.0, f"systemctl stop mid-pass returned in {elapsed:.2f} s")
        state = tomllib.loads((box.root / "var/lib/trimd/state.toml").read_text())
        cursors = [r.get("cursor", 0) for r in state.values()
                   if isinstance(r, dict) and r.get("mount_point") == TRIMTEST]
        checks.check(bool(cursors) and cursors[0] > 0, f"the cursor is saved: {cursors}")
    finally:
        ensure_running(box)
        box.sh(f"trimctl cancel {TRIMTEST}", check=False)  # the resumed pass
