"""The boot tier's look at trimd as a citizen of systemd (issue 35), under
the real logind and journald of the booted container:

- check_sleep_lock: `systemd-inhibit --list` shows trimd's delay lock on
  sleep and shutdown while a pass runs, and none while trimd is idle; a
  shutdown that logind announces (PrepareForShutdown) and that is then
  called off stops the pass, trimd lets the lock go (StoppedForSleep in the
  journal) and takes it again, and the pass goes on to its end without
  starting over;
- check_catalog: `journalctl -x -u trimd` shows the installed catalog's
  text for a pass that ended.

Why a shutdown and not a sleep: this kernel has no sleep states
(/sys/power/state is empty), so logind refuses Suspend before it sends
anything. A shutdown it announces like a sleep, and with
systemd-poweroff.service masked for the moment, systemd refuses the
poweroff.target job, so logind calls it off and says PrepareForShutdown(false)
as it says PrepareForSleep(false) after a sleep. Nothing here fakes a signal:
every one comes from the container's own logind. trimd handles both signals
in the same code (daemon/sleep_watch.cpp); the sleep itself, with a chunk
inside FITRIM, is tests/system/test_sleep_safe's (a logind stand-in)."""

import json
import re
import time
from pathlib import Path

from boot_context import TRIMTEST, check, ensure_running
from boot_root import message_id, wait_for
from boot_service import fill_and_free

STOPPED_ID = message_id("StoppedForSleep")  # lib/base/event_ids.def, trimd(8)
PASS_STARTED_ID = message_id("PassStarted")
PASS_FINISHED_ID = message_id("PassFinished")
CATALOG = Path(__file__).resolve().parents[2] / "catalog" / "trimd.catalog"
LOGIND = "org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager"


def trimd_locks(box):
    """systemd-inhibit --list's lines whose WHO is trimd: [(what, mode), ...]."""
    out = box.sh("systemd-inhibit --list --no-pager --no-legend", check=False).stdout
    locks = []
    for line in out.splitlines():
        words = line.split()
        if words and words[0] == "trimd":
            what = next((w for w in words if "sleep" in w or "shutdown" in w), "")
            locks.append((what, words[-1]))
    return locks


def statuses(box):
    out = box.sh("trimctl --json status", check=False)
    try:
        return json.loads(out.stdout).get("filesystems", []) if out.returncode == 0 else None
    except json.JSONDecodeError:
        return None


def idle(box):
    """trimd has no pass due or under way, and none due within a minute."""
    found = statuses(box)
    if found is None:
        return False
    soon = (time.time() + 60) * 1e6
    return all(fs.get("state") not in ("waiting", "trimming")
               and (fs.get("state") != "scheduled" or fs.get("next_trim_usec", 0) > soon)
               for fs in found)


def idle_without_lock(box):
    """An idle moment, seen before and after the look at the locks: the locks then."""
    if not idle(box):
        return None
    locks = trimd_locks(box)
    return ("idle", locks) if idle(box) else None


def journal_since(box, message_id_, since, mount_point=None):
    query = f"journalctl --no-pager -o json -u trimd.service --since=@{since:.0f} MESSAGE_ID={message_id_}"
    if mount_point:
        query += f" MOUNT_POINT={mount_point}"
    lines = box.sh(query, check=False).stdout.splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def state_of(box, mount_point):
    for fs in statuses(box) or []:
        if fs.get("mount_point") == mount_point:
            return fs
    return {}


def poweroff_called_off(box):
    """A poweroff that logind announces (PrepareForShutdown(true)) and
    systemd then refuses: systemd-poweroff.service is masked for the
    moment, so the poweroff.target job cannot start, and logind says
    PrepareForShutdown(false). Delayed by a lock, the call returns at once."""
    box.sh("systemctl mask --runtime systemd-poweroff.service")
    try:
        return box.sh(f"busctl call {LOGIND} PowerOff b false", check=False, timeout=60)
    finally:
        box.sh("systemctl unmask --runtime systemd-poweroff.service", check=False)


@check
def check_sleep_lock(session, checks):
    box, mount_point = session.box, TRIMTEST
    ensure_running(box)
    seen = wait_for(lambda: idle_without_lock(box), 180, step=1)
    checks.check(bool(seen) and not seen[1],
                 "sleep lock: systemd-inhibit --list shows no lock of trimd while it is idle",
                 f"{seen} {statuses(box)}")

    since = time.time() - 1
    box.sh(f"trimctl trim --ignore-idle {mount_point}")
    running = wait_for(lambda: state_of(box, mount_point).get("state") == "trimming", 30)
    # logind asks polkit first (the unit has no CAP_SYS_BOOT): not at once.
    locks = wait_for(lambda: trimd_locks(box), 10)
    checks.check(running and any(mode == "delay" and "sleep" in what and "shutdown" in what
                                 for what, mode in locks or []),
                 f"sleep lock: systemd-inhibit --list shows trimd's delay lock while a pass runs: "
                 f"{locks}", box.sh("systemd-inhibit --list --no-pager", check=False).stdout)

    before = state_of(box, mount_point).get("progress", 0)
    call = poweroff_called_off(box)  # delayed by trimd's lock: logind answers at once
    stopped = wait_for(lambda: journal_since(box, STOPPED_ID, since), 15)
    checks.check(call.returncode == 0 and bool(stopped)
                 and stopped[-1].get("REASON") == "shutdown",
                 "a poweroff logind announced and systemd refused: trimd stopped its pass for it "
                 f"(StoppedForSleep REASON={(stopped or [{}])[-1].get('REASON')}, "
                 f"CHUNKS={(stopped or [{}])[-1].get('CHUNKS')})",
                 call.stdout[-500:] + box.sh("journalctl --no-pager -n 30 -u systemd-logind "
                                             "-u trimd.service", check=False).stdout)
    again = wait_for(lambda: trimd_locks(box), 15)
    checks.check(bool(again), f"after the shutdown was called off trimd holds its lock again: {again}")

    finished = wait_for(lambda: journal_since(box, PASS_FINISHED_ID, since, mount_point), 120, step=1)
    started = journal_since(box, PASS_STARTED_ID, since, mount_point)
    checks.check(bool(finished) and finished[-1].get("RESULT") == "success" and len(started) == 1,
                 f"the pass went on after it (progress {before:.2f} before) and ended once, "
                 f"started once: {len(started)} start(s), result "
                 f"{(finished or [{}])[-1].get('RESULT')}")
    gone = wait_for(lambda: (lambda s: s if s and not s[1] else None)(idle_without_lock(box)), 60,
                    step=1)
    checks.check(bool(gone), "the pass over, trimd's lock is gone again", str(trimd_locks(box)))


def catalog_entry(message_id_):
    """The catalog's entry for `message_id_`: a pattern for its subject
    (each @FIELD@ matching any text) and the lines of its text without a
    @FIELD@, which journalctl -x must show as they are."""
    entry = CATALOG.read_text().split(f"-- {message_id_}\n", 1)[1].split("\n-- ", 1)[0]
    headers, body = entry.split("\n\n", 1)
    subject = next(line for line in headers.splitlines() if line.startswith("Subject: "))
    pattern = ".+".join(re.escape(part) for part in re.split(r"@\w+@", subject[len("Subject: "):]))
    lines = [line.strip() for line in body.splitlines() if line.strip() and "@" not in line]
    return re.compile(pattern), lines


@check
def check_catalog(session, checks):
    """Uses a pass an earlier check made, or makes one when run alone."""
    box, mount_point = session.box, TRIMTEST
    ensure_running(box)
    if not journal_since(box, PASS_FINISHED_ID, 0, mount_point):
        fill_and_free(session.fs)
        box.sh(f"trimctl trim --wait --ignore-idle {mount_point}", check=False, timeout=300)
    out = box.sh(f"journalctl --no-pager -x -u trimd.service MESSAGE_ID={PASS_FINISHED_ID} "
                 f"MOUNT_POINT={mount_point} -n 1", check=False).stdout
    subject, wanted = catalog_entry(PASS_FINISHED_ID)
    shown = [line for line in wanted if line in out]
    checks.check(bool(wanted) and len(shown) == len(wanted) and subject.search(out) is not None,
                 f"journalctl -x -u trimd explains a pass from the catalog: {len(shown)} of "
                 f"{len(wanted)} lines of its entry, and its subject",
                 out[-1500:])
