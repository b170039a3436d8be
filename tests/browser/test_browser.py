#!/usr/bin/python3
"""Browser tier: trimd's Cockpit page in headless Chromium, against the real
trimd on a private system-like bus, served by cockpit-ws on loopback inside a
network namespace of this test's own.

Checks: the page lists the test's loop filesystems with their states; a pass
started from the page moves the progress bar and ends with the bytes the bus
reports; the history chart shows the pass; Cancel ends a pass; Take over and
Hand back on a filesystem mounted with discard change the bus's Takeover;
Pause all (by keyboard) makes the Manager's State "paused" and Resume all
clears it; a filesystem mounted while the page is open appears without a
reload and goes on umount; axe-core finds no serious or critical violation; a session of user nobody sees
the page read-only and an AccessDenied in words; trimd stopped shows "not running"
with a Start button, and its return brings the filesystems back. Screenshots
of each state go to --artefacts.

Exit 0 when every check passes, 1 on a failure, 77 when this machine lacks
root or a tool (a failure instead under CI=true). Runs with /usr/bin/python3
(Debian's python3-selenium)."""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_kit as kit  # noqa: E402
from browser_page import Page  # noqa: E402

FS = "org.trimd.trimd1.Filesystem"

FS_CONFIG = """\
# Browser tier: only the test's own loop filesystems, in small steps.
[idle]
window = "1s"
sample_interval = "200ms"

[trim]
enabled = false
first_delay = "1h"
randomized_delay = "0s"

[[filesystem]]
match = "{work}/mnt/*"
enabled = true
chunk_size = "8MiB"
chunk_time = "0"
pause = "150ms"
"""


class Failures:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        kit.log(("PASS " if ok else "FAIL ") + what + ("" if ok or not detail else f"\n{detail}"))
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok


def check_listed(page, checks, mounts):
    states = {str(m): page.wait_state(m, lambda s: s == "scheduled") for m in mounts}
    checks.check(all(s == "scheduled" for s in states.values()),
                 "the page lists the test's filesystems as scheduled", str(states))
    page.shot("1-scheduled")


def check_pass(page, checks, bus, mount):
    page.click_card(mount, "ignore-idle")
    page.click_card(mount, "trim")
    seen = page.watch_progress(mount, timeout=30)
    checks.check(len([v for v in seen if 0 < v < 100]) >= 2 and seen == sorted(seen),
                 "a pass started from the page moves its progress bar", str(seen))
    done = page.wait_attribute(mount, "lastTrimEnd", lambda v: v not in (None, "0"), 30)
    path = bus.filesystem_path(mount)
    on_bus = bus.get(path, FS, "LastBytesTrimmed") if path else None
    shown = page.card_attribute(mount, "lastBytes")
    checks.check(done and on_bus not in (None, "0") and shown == on_bus,
                 f"the pass ends with the bytes the bus reports ({on_bus})",
                 f"page {shown}, bus {on_bus}")
    text = page.card_text(mount)
    checks.check("MiB in" in text and "waited" in text, "the last trim is shown in words", text)


def check_cancel(page, checks, bus, mount):
    page.click_card(mount, "ignore-idle")
    page.click_card(mount, "trim")
    started = page.wait_state(mount, lambda s: s == "trimming") == "trimming"
    page.click_card(mount, "cancel")
    path = bus.filesystem_path(mount)
    result = kit.wait_for(lambda: bus.get(path, FS, "LastResult") == "cancelled", 10)
    checks.check(started and result and "(cancelled)" in page.card_text(mount),
                 "Cancel on a card ends its pass: LastResult cancelled on the bus and on the page",
                 f"started {started}, LastResult {bus.get(path, FS, 'LastResult')}")


def check_takeover(page, checks, bus, mount):
    """A filesystem mounted with discard: Take over remounts it without, Hand back with."""
    path = bus.filesystem_path(mount)
    offered = page.wait_attribute(mount, "state", lambda s: s is not None, 10) and \
        page.button_visible(mount, "take-over") and not page.button_visible(mount, "hand-back")
    page.click_card(mount, "take-over")
    taken = kit.wait_for(lambda: bus.get(path, FS, "Takeover") == "taken-over", 10)
    shown = kit.wait_for(lambda: page.button_visible(mount, "hand-back"), 10)
    checks.check(offered and taken and shown,
                 "Take over on the page: the bus says taken-over, Hand back is offered",
                 f"offered {offered}, Takeover {bus.get(path, FS, 'Takeover')}")
    page.click_card(mount, "hand-back")
    back = kit.wait_for(lambda: bus.get(path, FS, "Takeover") not in (None, "taken-over"), 10)
    checks.check(back and kit.wait_for(lambda: page.button_visible(mount, "take-over"), 10),
                 "Hand back on the page gives discard back", f"Takeover {bus.get(path, FS, 'Takeover')}")


def check_history(page, checks, mount):
    passes = page.open_history(mount)
    bars = page.chart_bars(mount)
    checks.check(passes >= 1 and bars == passes, "the history chart draws a bar per pass",
                 f"passes {passes}, bars {bars}")
    page.shot("3-history")


def check_pause(page, checks, bus):
    # By keyboard alone: Tab to "Pause all", Enter.
    reached = page.press_by_keyboard("pause-all")
    paused = kit.wait_for(lambda: bus.manager("State") == "paused", 10)
    banner = page.wait_visible("paused-banner", True)
    checks.check(reached and paused and banner,
                 "Pause all on the page (by keyboard) makes the Manager's State paused",
                 f"reached by Tab {reached}, State {bus.manager('State')}")
    page.shot("4-paused")
    page.click("resume-all")
    resumed = kit.wait_for(lambda: bus.manager("State") not in (None, "paused"), 10)
    checks.check(resumed and page.wait_visible("paused-banner", False),
                 "Resume all clears it", f"State {bus.manager('State')}")


def check_mount_comes_and_goes(page, checks, cleanup, work):
    fs = kit.LoopFs(cleanup, work / "c.img", 64, work / "mnt" / "c", mkfs_args=["-b", "1024"])
    appeared = page.wait_state(fs.mount_point, lambda s: s is not None)
    checks.check(appeared is not None, "a filesystem mounted while the page is open appears",
                 f"state {appeared}")
    page.shot("5-mounted")
    kit.run(["umount", str(fs.mount_point)])
    gone = kit.wait_for(lambda: page.card_state(fs.mount_point) is None, 15)
    checks.check(gone, "and disappears on umount")


def check_axe(page, checks, axe_js):
    violations = page.axe(axe_js)
    bad = [v for v in violations if v.get("impact") in ("serious", "critical")]
    checks.check(not bad, f"axe-core: no serious or critical violation ({len(violations)} in all)",
                 "\n".join(f"{v['id']} ({v['impact']}): {v['help']}" for v in bad))


def check_read_only(driver, checks, cleanup, bus, data_dir, work, artefacts, mount):
    ws = kit.CockpitWs(cleanup, bus, data_dir, work, uid=kit.NOBODY)
    page = Page(driver, ws.url, artefacts, "nobody-")
    page.load()
    page.wait_state(mount, lambda s: s is not None)
    kit.wait_for(lambda: page.page_attribute("canManage") == "false", 10)
    enabled = page.enabled_manage_buttons()
    checks.check(page.visible("read-only-note") and not enabled,
                 "a session of user nobody sees the page read-only", f"enabled: {enabled}")
    page.shot("6-read-only")
    # The bus refuses even when a button is forced on: the page says so in words.
    page.force_click("pause-all")
    alert = page.wait_alert()
    checks.check("Not allowed" in alert and bus.manager("State") != "paused",
                 "an AccessDenied is shown in words", alert)
    ws.process.stop()


def check_not_running(page, checks, trimd, mount):
    trimd.stop()
    shown = page.wait_visible("not-running", True)
    summary = page.summary()
    checks.check(shown and page.card_state(mount) is None and page.visible("start-trimd")
                 and summary == "trimd is not running",
                 "trimd stopped: the page says so and offers to start it",
                 f"shown {shown}, card {page.card_state(mount)}, summary {summary!r}")
    page.shot("7-not-running")
    # No systemd on the test's bus: the page says why trimd.service did not start.
    page.click("start-trimd")
    alert = page.wait_alert()
    checks.check("Could not start trimd.service" in alert, "a failed start is shown in words", alert)
    trimd.start()
    back = page.wait_state(mount, lambda s: s is not None)
    ok = checks.check(back is not None and not page.visible("not-running"),
                      "trimd back: its filesystems return without a reload",
                      f"state {back}, summary {page.summary()!r}, "
                      f"not-running shown {page.visible('not-running')}")
    if not ok:
        page.shot("fail-trimd-back")


def check_no_script_error(driver, checks):
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    checks.check(not errors, "the page threw no JavaScript error", "\n".join(errors))


def run_checks(args, checks, cleanup, work):
    data_dir = work / "prefix" / "share"
    kit.run(["cmake", "--install", args.build, "--component", "cockpit", "--prefix", str(work / "prefix")])
    bus = kit.Bus(cleanup, args.bus_config, work)
    mounts = [work / "mnt" / name for name in ("a", "b")]
    for m in mounts:
        kit.LoopFs(cleanup, work / f"{m.name}.img", 256, m, mkfs_args=["-b", "1024", "-E",
                   "lazy_itable_init=0,lazy_journal_init=0,nodiscard"])
    inline = kit.LoopFs(cleanup, work / "d.img", 64, work / "mnt" / "d", options="discard")
    trimd = kit.Trimd(cleanup, args.trimd, bus, FS_CONFIG.format(work=work), work)
    trimd.start()
    ws = kit.CockpitWs(cleanup, bus, data_dir, work)
    driver = kit.chromium(cleanup, work)
    page = Page(driver, ws.url, args.artefacts, "")
    page.load()
    check_listed(page, checks, mounts)
    check_pass(page, checks, bus, mounts[0])
    check_history(page, checks, mounts[0])
    check_cancel(page, checks, bus, mounts[1])
    check_takeover(page, checks, bus, inline.mount_point)
    check_axe(page, checks, args.axe)
    check_pause(page, checks, bus)
    check_mount_comes_and_goes(page, checks, cleanup, work)
    check_read_only(driver, checks, cleanup, bus, data_dir, work, args.artefacts, mounts[0])
    page.load()
    check_not_running(page, checks, trimd, mounts[0])
    check_no_script_error(driver, checks)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, help="the build directory (cmake --install)")
    parser.add_argument("--trimd", required=True, help="the trimd binary")
    parser.add_argument("--bus-config", required=True, help="the bus tier's test-bus.conf")
    parser.add_argument("--artefacts", required=True, type=Path, help="where screenshots go")
    parser.add_argument("--axe", type=Path,
                        default=Path(os.environ.get(
                            "TRIMD_AXE_JS", "/var/cache/trimd-browser/node_modules/axe-core/axe.min.js")))
    args = parser.parse_args()
    reason = kit.missing_prerequisite(args.axe)
    if reason:
        print(f"browser tier: {reason}")
        return 1 if os.environ.get("CI") == "true" else 77
    kit.enter_own_network_namespace(sys.argv)

    started = time.monotonic()
    checks = Failures()
    cleanup = kit.Cleanup()
    work = Path(tempfile.mkdtemp(prefix="trimd-browser-"))
    os.chmod(work, 0o755)  # cockpit-ws as nobody reads the page and the bus socket here
    cleanup.push(f"remove {work}", lambda: shutil.rmtree(work, ignore_errors=True))
    args.artefacts.mkdir(parents=True, exist_ok=True)
    for old in args.artefacts.glob("*.png"):  # the list printed at the end is this run's
        old.unlink()
    try:
        run_checks(args, checks, cleanup, work)
    except Exception as error:  # a broken step is a failure, and cleanup still runs
        checks.check(False, f"browser tier aborted: {error!r}",
                     getattr(error, "stdout", "") or getattr(error, "msg", "") or "")
    finally:
        cleanup.run_all()
    for shot in sorted(args.artefacts.glob("*.png")):
        print(f"screenshot: {shot}")
    kit.log(f"browser tier: {time.monotonic() - started:.0f} s")
    print(f"browser: {checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed or not checks.passed else 0


if __name__ == "__main__":
    sys.exit(main())
