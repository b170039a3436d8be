#!/usr/bin/env python3
"""Boot tier: trimd's .deb in a Debian 12 container booted with systemd.

Builds the .deb, installs it into a cached minbase root (on a loop-backed
ext4 of its own), boots the root with systemd-nspawn and checks, from inside:
notify readiness and the watchdog, reload and restart, D-Bus activation,
fstrim.service skipped while trimd runs, journal priorities, trimctl status
and trim --wait on a loop filesystem bound in, polkit refusing and then
(with the sample rule) granting a user, a stop in the middle of a pass, and
an umount while a chunk is inside FITRIM (on the slow-TRIM device,
bench/slowtrim, given with --slowtrim), and trimd-cockpit's page through a
real Cockpit login (Chromium on the host, cockpit_login.py).

Exit 0 when every check passes, 1 on a failure, 77 when this machine lacks
root or a tool (a failure instead under CI=true). Everything it made is
undone on every exit path."""

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from boot_root import (Cleanup, Container, LoopFs, SlowTrimFs, cached_root_tarball,  # noqa: E402
                       message_id, run, wait_for)
from boot_cockpit import CockpitLogin, check_cockpit  # noqa: E402
from boot_fleet import check_fleet_dropin  # noqa: E402
from boot_citizen import check_catalog, check_sleep_lock  # noqa: E402

TOOLS = ["debootstrap", "systemd-nspawn", "nsenter", "dpkg-buildpackage", "dh", "mkfs.ext4",
         "losetup", "setpriv"]
TRIMTEST = "/mnt/trimtest"
TAKEOVER = "/mnt/takeover"  # mounted with discard on the host, bound in
SLOWTRIM = "/mnt/slowtrim"  # on the slow-TRIM device on the host, bound in
PASS_CONFIG = f"""\
# Boot tier: only the bound loop filesystems, in slow steps.
[trim]
enabled = false

[[filesystem]]
match = "{TAKEOVER}"
enabled = true
inline_discard = "takeover"

[[filesystem]]
match = "{TRIMTEST}"
enabled = true
chunk_size = "128MiB"
chunk_time = "0"
pause = "1s"

# Trimmed only when asked; then in one chunk of seconds.
[[filesystem]]
match = "{SLOWTRIM}"
chunk_size = "1GiB"
chunk_time = "0"
"""
# Test-only: the unit refuses containers, as fstrim does; the boot tier
# lifts that, and shortens the watchdog so that a missed keep-alive shows.
TRIMD_DROPIN = "[Unit]\nConditionVirtualization=\n\n[Service]\nWatchdogSec=3s\n"
FSTRIM_DROPIN = "[Unit]\nConditionVirtualization=\n"
POLKIT_RULE = "/usr/share/doc/trimd/50-trimd.rules"


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class Failures:
    def __init__(self):
        self.count = 0

    def check(self, ok, what, detail=""):
        log(("PASS " if ok else "FAIL ") + what + ("" if ok or not detail else f"\n{detail}"))
        if not ok:
            self.count += 1
        return ok


def missing_prerequisite():
    if os.geteuid() != 0:
        return "needs root"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return "missing tools: " + ", ".join(missing)
    if not Path("/dev/loop-control").exists():
        return "no /dev/loop-control"
    # The Cockpit page is looked at with the browser tier's Chromium.
    browser = [p for p in ("/usr/bin/chromium", "/usr/bin/chromedriver") if not os.access(p, os.X_OK)]
    if browser or run(["/usr/bin/python3", "-c", "import selenium"], check=False).returncode != 0:
        return "missing: chromium, chromium-driver or python3-selenium (for the Cockpit page)"
    return None


def missing_slowtrim(slowtrim):
    if not slowtrim or not os.access(slowtrim, os.X_OK):
        return f"no slowtrim binary ({slowtrim!r}; build with -DTRIMD_BUILD_BENCH=ON)"
    if not Path("/dev/fuse").exists():
        return "no /dev/fuse (slowtrim)"
    return None


def show(box, unit, *props):
    out = box.sh(f"systemctl show {unit} " + " ".join(f"-p {p}" for p in props)).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def trimctl_json(box, mount_point):
    out = box.sh(f"trimctl --json status {mount_point}", check=False)
    if out.returncode != 0:
        return None
    try:
        return find_mount(json.loads(out.stdout), mount_point)
    except json.JSONDecodeError:
        return None


def find_mount(node, mount_point):
    if isinstance(node, dict):
        if node.get("mount_point") == mount_point:
            return node
        node = list(node.values())
    if isinstance(node, list):
        for item in node:
            found = find_mount(item, mount_point)
            if found:
                return found
    return None


def prepare_root(cleanup, work, deb, cockpit):
    image = LoopFs(cleanup, work / "root.img", 2048, work / "root")
    tarball = cached_root_tarball(log, deb)
    run(["tar", "-C", str(image.mount_point), "--numeric-owner", "-xf", str(tarball)])
    root = image.mount_point
    shutil.copy(deb, root / "tmp" / "trimd.deb")
    shutil.copy(cockpit.deb, root / "tmp" / "trimd-cockpit.deb")
    log(f"root: dpkg -i {deb.name} {cockpit.deb.name}")
    print(run(["chroot", str(root), "dpkg", "-i", "/tmp/trimd.deb", "/tmp/trimd-cockpit.deb"])
          .stdout.strip()[-400:])
    cockpit.configure(root)
    for unit, text in (("trimd.service", TRIMD_DROPIN), ("fstrim.service", FSTRIM_DROPIN)):
        dropin = root / "etc/systemd/system" / f"{unit}.d"
        dropin.mkdir(parents=True, exist_ok=True)
        (dropin / "boot-test.conf").write_text(text)
    (root / "etc/trimd/trimd.toml").write_text(PASS_CONFIG)
    run(["chroot", str(root), "useradd", "--no-create-home", "alice"])
    run(["chroot", str(root), "chpasswd"], input=f"alice:{cockpit.password}\n")
    return root


def fill_and_free(fs):
    """Data written and deleted: blocks the backing file holds until trimmed."""
    data = fs.mount_point / "data"
    with open(data, "wb") as out:
        for _ in range(256):
            out.write(os.urandom(1 << 20))
        os.fsync(out.fileno())
    data.unlink()
    run(["sync", "-f", str(fs.mount_point)])


def check_boot(box, checks):
    state = box.wait_booted()
    checks.check(state in ("running", "degraded"), f"container booted ({state})")
    props = show(box, "trimd.service", "ActiveState", "Type", "StatusText", "WatchdogUSec")
    checks.check(props.get("ActiveState") == "active" and props.get("Type") == "notify",
                 "trimd.service active after boot, Type=notify", str(props))
    checks.check(bool(props.get("StatusText")), f"STATUS= set: {props.get('StatusText')!r}")
    print(box.sh("systemctl status --no-pager trimd.service", check=False).stdout)


def check_watchdog(box, checks):
    before = show(box, "trimd.service", "MainPID", "WatchdogUSec")
    time.sleep(5)  # beyond the test's WatchdogSec=3s
    after = show(box, "trimd.service", "MainPID", "NRestarts", "ActiveState")
    checks.check(before.get("WatchdogUSec") == "3s" and after.get("ActiveState") == "active"
                 and after.get("MainPID") == before.get("MainPID") and after.get("NRestarts") == "0",
                 "watchdog: keep-alives arrive, no restart after 5 s of WatchdogSec=3s",
                 f"{before} {after}")


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


def check_takeover(box, checks, fs):
    """Taken over by the installed, sandboxed unit: seen outside trimd's
    mount namespace, kept across a restart, handed back on stop."""
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
    with DiscardWatch(fs) as watch:
        restart = box.sh("systemctl restart trimd.service", check=False)
        time.sleep(2)  # the new process has rescanned and adopted the takeover
    after = trimctl_json(box, TAKEOVER) or {}
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


def check_reload_restart(box, checks):
    pid = show(box, "trimd.service", "MainPID")["MainPID"]
    reload = box.sh("systemctl reload trimd.service", check=False)
    after = show(box, "trimd.service", "MainPID", "ActiveState")
    checks.check(reload.returncode == 0 and after["MainPID"] == pid and after["ActiveState"] == "active",
                 "systemctl reload: same process, still active", reload.stdout + str(after))
    restart = box.sh("systemctl restart trimd.service", check=False)
    after = show(box, "trimd.service", "MainPID", "ActiveState")
    checks.check(restart.returncode == 0 and after["MainPID"] != pid and after["ActiveState"] == "active",
                 "systemctl restart: a new process, active (notify readiness)", restart.stdout + str(after))


def check_fstrim(box, checks):
    box.sh("systemctl start fstrim.service", check=False)
    skipped = show(box, "fstrim.service", "ExecMainStartTimestampMonotonic", "Result")
    checks.check(skipped.get("ExecMainStartTimestampMonotonic") == "0"
                 and skipped.get("Result") == "exec-condition",
                 "fstrim.service skipped (ExecCondition) while trimd runs", str(skipped))
    print(box.sh("journalctl --no-pager -u fstrim.service", check=False).stdout)
    box.sh("systemctl stop trimd.service")
    box.sh("systemctl start fstrim.service", check=False)
    ran = show(box, "fstrim.service", "ExecMainStartTimestampMonotonic")
    checks.check(ran.get("ExecMainStartTimestampMonotonic", "0") != "0",
                 "fstrim.service runs again once trimd is stopped", str(ran))


def check_activation(box, checks):
    checks.check(show(box, "trimd.service", "ActiveState")["ActiveState"] != "active",
                 "trimd stopped before the activation check")
    call = box.sh("busctl call org.trimd.trimd1 /org/trimd/trimd1 org.freedesktop.DBus.Peer Ping",
                  check=False, timeout=60)
    state = show(box, "trimd.service", "ActiveState")["ActiveState"]
    checks.check(call.returncode == 0 and state == "active",
                 "D-Bus activation: a call to org.trimd.trimd1 started trimd.service",
                 call.stdout + state)


def check_journal(box, checks):
    (box.root / "etc/trimd/trimd.toml").write_text(PASS_CONFIG + "\n[trim\n")  # broken
    box.sh("systemctl kill -s HUP trimd.service")
    time.sleep(1)
    (box.root / "etc/trimd/trimd.toml").write_text(PASS_CONFIG)
    box.sh("systemctl kill -s HUP trimd.service")
    warnings = box.sh("journalctl --no-pager -u trimd.service -p warning -o json").stdout.splitlines()
    entries = [json.loads(line) for line in warnings if line.strip()]
    everything = [json.loads(line) for line in box.sh(
        "journalctl --no-pager -u trimd.service -o json").stdout.splitlines() if line.strip()]
    native = [e for e in everything if e.get("SYSLOG_IDENTIFIER") == "trimd"]
    checks.check(any(e.get("PRIORITY") == "3" and e.get("_TRANSPORT") == "journal" for e in entries),
                 "journalctl -u trimd -p warning shows the failed reload (priority 3, native)",
                 "\n".join(warnings[-5:]))
    checks.check(any(e.get("PRIORITY") == "6" for e in native)
                 and all(int(e.get("PRIORITY", "6")) <= 4 for e in entries),
                 "info lines keep priority 6 and stay out of -p warning")
    print(box.sh("journalctl --no-pager -u trimd.service -p warning", check=False).stdout)


def check_trim(box, checks, fs):
    fill_and_free(fs)  # now: the fstrim check above trimmed the filesystem too
    status = wait_for(lambda: trimctl_json(box, TRIMTEST), 15)
    checks.check(status is not None, f"trimctl status lists {TRIMTEST}", str(status))
    before = fs.allocated_bytes()
    trim = box.sh(f"trimctl trim --wait --ignore-idle {TRIMTEST}", check=False, timeout=300)
    after = fs.allocated_bytes()
    checks.check(trim.returncode == 0 and after < before - (128 << 20),
                 f"trimctl trim --wait: backing file {before >> 20} MiB -> {after >> 20} MiB",
                 trim.stdout[-500:])


PASS_FINISHED_ID = message_id("PassFinished")  # lib/base/event_ids.def, trimd(8)


def check_pass_in_journal(box, checks):
    """The journal answers "when was it last trimmed, and how much" by fields."""
    query = f"journalctl --no-pager -o json MESSAGE_ID={PASS_FINISHED_ID} MOUNT_POINT={TRIMTEST}"

    def finished_passes():
        lines = box.sh(query, check=False).stdout.splitlines()
        entries = [json.loads(line) for line in lines if line.strip()]
        return [e for e in entries
                if e.get("RESULT") == "success" and int(e.get("BYTES", "0")) > 0
                and "DURATION_USEC" in e]

    done = wait_for(finished_passes, 10, step=0.5)
    checks.check(bool(done), f"journalctl MESSAGE_ID=<pass finished> MOUNT_POINT={TRIMTEST}: "
                 f"{len(done or [])} successful pass(es) with BYTES and DURATION_USEC",
                 box.sh(query.replace("-o json", "-o verbose") + " -n 1", check=False).stdout)


def check_polkit(box, checks):
    refused = box.sh(f"trimctl pause {TRIMTEST}", check=False, user="alice")
    checks.check(refused.returncode != 0, "a user who is not root is refused", refused.stdout)
    box.sh(f"groupadd --system trimd && usermod -a -G trimd alice && "
           f"cp {POLKIT_RULE} /etc/polkit-1/rules.d/")
    granted = wait_for(lambda: box.sh(f"trimctl pause {TRIMTEST}", check=False,
                                      user="alice").returncode == 0, 15, step=1)
    checks.check(granted, "the sample polkit rule grants the group trimd")
    box.sh(f"trimctl resume {TRIMTEST}")


def check_stop_mid_pass(box, checks):
    box.sh(f"trimctl trim --ignore-idle {TRIMTEST}")
    running = wait_for(lambda: (trimctl_json(box, TRIMTEST) or {}).get("state") == "trimming", 15)
    checks.check(running, "a pass is running before the stop")
    time.sleep(1.5)  # past the first chunk
    log("mid-pass: " + box.sh("systemctl status --no-pager -n 0 trimd.service", check=False).stdout
        .split("Status: ")[-1].splitlines()[0])
    start = time.monotonic()
    box.sh("systemctl stop trimd.service")
    elapsed = time.monotonic() - start
    checks.check(elapsed < 2.0, f"systemctl stop mid-pass returned in {elapsed:.2f} s")
    state = tomllib.loads((box.root / "var/lib/trimd/state.toml").read_text())
    cursors = [r.get("cursor", 0) for r in state.values()
               if isinstance(r, dict) and r.get("mount_point") == TRIMTEST]
    checks.check(bool(cursors) and cursors[0] > 0, f"the cursor is saved: {cursors}")


FITRIM_REQUEST = "0xc0185879"  # _IOWR('X', 121, struct fstrim_range), as /proc/PID/syscall shows it

# Inside the container, in one go so that nothing slow sits between seeing
# the chunk in FITRIM and the umount: the runner (a child of trimd) found in
# ioctl(FITRIM), still there 300 ms later (a chunk with seconds to go, not
# one about to end), the umount timed, then the runner's end.
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
sleep 0.3
in_fitrim $runner && before=yes || before=no
start=$(now_ms)
umount @MOUNT@ 2>&1; rc=$?
end=$(now_ms)
in_fitrim $runner && after=yes || after=no
gone=-1
for i in $(seq 1000); do alive $runner || { gone=$(( $(now_ms) - end )); break; }; sleep 0.005; done
echo "found=yes in_fitrim_before=$before rc=$rc umount_ms=$((end - start))" \
     "in_fitrim_after=$after runner_gone_ms=$gone"
"""


def check_umount_mid_chunk(box, checks):
    """Issue 16 item 8 under the real unit: the runner trims through a
    detached copy of the mount (open_tree, allowed by the unit's syscall
    filter), so an umount in the container's namespace, which propagates into
    trimd's, is not refused with EBUSY while the chunk is in the kernel."""
    before = show(box, "trimd.service", "MainPID", "NRestarts")
    box.sh(f"trimctl trim --ignore-idle {SLOWTRIM}")
    script = UMOUNT_MID_CHUNK.replace("@FITRIM@", FITRIM_REQUEST).replace("@MOUNT@", SLOWTRIM)
    out = box.sh(script, check=False, timeout=120).stdout
    log("umount mid-chunk: " + out.strip())
    got = dict(word.split("=", 1) for word in out.split() if "=" in word)
    if not checks.check(got.get("found") == "yes" and got.get("in_fitrim_before") == "yes",
                        "umount mid-chunk: trimd's runner is inside FITRIM on the slow device "
                        "before the umount", out):
        return
    checks.check(got.get("rc") == "0" and int(got.get("umount_ms", "99999")) < 1000,
                 f"umount mid-chunk succeeds at once under trimd.service: exit {got.get('rc')} "
                 f"in {got.get('umount_ms')} ms (the chunk was still in FITRIM after it: "
                 f"{got.get('in_fitrim_after')})",
                 box.sh("journalctl --no-pager -u trimd.service -n 20", check=False).stdout)
    gone = int(got.get("runner_gone_ms", "-1"))
    checks.check(0 <= gone < 2000, f"the runner stopped {gone} ms after the umount")
    mounted = box.sh(f"findmnt -n {SLOWTRIM}", check=False).returncode == 0
    after = show(box, "trimd.service", "MainPID", "NRestarts", "ActiveState")
    alive = box.sh("trimctl status", check=False).returncode == 0
    checks.check(not mounted and after.get("ActiveState") == "active"
                 and after.get("MainPID") == before.get("MainPID")
                 and after.get("NRestarts") == before.get("NRestarts") and alive,
                 "trimd survives it: same process, active, answering trimctl status",
                 f"{before} {after} mounted={mounted}")


# scripts/test-all.sh builds the .deb beside the other tiers into this
# directory and leaves "ok" or "failed" there when done.
PREBUILT_DEB_DIR = "TRIMD_PREBUILT_DEB_DIR"


def prebuilt_deb():
    """The .deb scripts/test-all.sh built meanwhile; None when it did not
    (then this tier builds its own, and shows why a build fails)."""
    where = os.environ.get(PREBUILT_DEB_DIR)
    if not where:
        return None
    where = Path(where)
    log(f"waiting for the .deb being built in {where}")
    wait_for(lambda: (where / "ok").exists() or (where / "failed").exists(), 1800, step=1.0)
    found = sorted(where.glob("trimd_*.deb"))
    if not (where / "ok").exists() or not found:
        log("the .deb built beside the tiers is not there: building it here")
        return None
    return found[-1]


def build_deb(source, out):
    prebuilt = prebuilt_deb()
    if prebuilt:
        return prebuilt
    log("building the .deb")
    script = Path(__file__).resolve().parent / "build_deb.sh"
    run(["bash", str(script), source, str(out)], timeout=1800)
    return next(out.glob("trimd_*.deb"))


def cockpit_deb_beside(deb):
    """trimd-cockpit's .deb, built with trimd's (build_deb.sh) into the same place."""
    found = sorted(deb.parent.glob("trimd-cockpit_*.deb"))
    if not found:
        raise RuntimeError(f"no trimd-cockpit_*.deb beside {deb}")
    return found[-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True, help="trimd's source tree")
    parser.add_argument("--deb", type=Path, help="use this .deb instead of building one")
    parser.add_argument("--slowtrim", help="bench/slowtrim, for the umount in the middle of a chunk")
    parser.add_argument("--artefacts", type=Path, help="where the Cockpit page's screenshot goes")
    args = parser.parse_args()
    reason = missing_prerequisite() or missing_slowtrim(args.slowtrim)
    if reason:
        print(f"boot tier: {reason}")
        return 1 if os.environ.get("CI") == "true" else 77

    started = time.monotonic()
    if args.artefacts:
        args.artefacts.mkdir(parents=True, exist_ok=True)
    checks = Failures()
    cleanup = Cleanup()
    work = Path(tempfile.mkdtemp(prefix="trimd-boot-", dir="/var/tmp"))
    cleanup.push(f"remove {work}", lambda: shutil.rmtree(work, ignore_errors=True))
    try:
        deb = args.deb or build_deb(args.source, work / "deb")
        cockpit = CockpitLogin(cockpit_deb_beside(deb))
        root = prepare_root(cleanup, work, deb, cockpit)
        fs = LoopFs(cleanup, work / "trimtest.img", 1024, work / "trimtest")
        inline = LoopFs(cleanup, work / "takeover.img", 256, work / "takeover",
                        options="discard,noatime")
        # 4000 free extents: one FITRIM over them takes about 12 s at 3 ms each.
        slow = SlowTrimFs(cleanup, args.slowtrim, work, 512, 8000, 8192, work / "slowtrim")
        log("booting")
        binds = [(fs.mount_point, TRIMTEST), (inline.mount_point, TAKEOVER),
                 (slow.mount_point, SLOWTRIM)]
        box = Container(cleanup, root, f"trimd-boot-{os.getpid()}", binds, work / "console.log")
        # The umount first: fstrim.service (check_fstrim) would trim the slow filesystem.
        for step in (check_boot, check_watchdog, check_umount_mid_chunk):
            step(box, checks)
        check_takeover(box, checks, inline)
        for step in (check_reload_restart, check_fstrim, check_activation, check_journal):
            step(box, checks)
        check_trim(box, checks, fs)
        check_pass_in_journal(box, checks)
        check_catalog(box, checks, TRIMTEST)
        check_sleep_lock(box, checks, TRIMTEST)
        check_polkit(box, checks)
        check_cockpit(box, checks, cockpit, TRIMTEST, args.artefacts)
        check_fleet_dropin(box, checks, cleanup, PASS_CONFIG, TRIMTEST)
        check_stop_mid_pass(box, checks)
    except Exception as error:  # a broken step is a failure, and cleanup still runs
        checks.check(False, f"boot tier aborted: {error!r}",
                     getattr(error, "stdout", "") or getattr(error, "output", "") or "")
    finally:
        cleanup.run_all()
    log(f"boot tier: {checks.count} failure(s) in {time.monotonic() - started:.0f} s")
    return 1 if checks.count else 0


if __name__ == "__main__":
    sys.exit(main())
