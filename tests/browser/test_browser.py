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
reload and goes on umount; axe-core finds no serious or critical violation; a session of user
nobody sees the page
read-only and an AccessDenied in words; trimd stopped shows "not running"
with a Start button, and its return brings the filesystems back. Screenshots
of each state go to --artefacts.

`setup` makes the namespaces, the bus, the loop filesystems, trimd,
cockpit-ws and a Chromium session, and leaves them running; `check NAME`
runs one check in them (`list` names the checks); `cleanup` ends them.
ctest runs each as a test of its own (browser_setup, browser_<check>,
browser_cleanup: CMakeLists.txt); `all` runs everything in one go. Every
check loads the page afresh and leaves trimd and the bus as it found them.

A step exits 0 when its checks pass, 1 on a failure, 77 when this machine
lacks root or a tool (a failure instead under CI=true). Runs with
/usr/bin/python3 (Debian's python3-selenium)."""

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_kit as kit  # noqa: E402
from browser_page import Page  # noqa: E402
from pykit import fixture  # noqa: E402
from pykit.cleanup import Undo  # noqa: E402
from pykit.loopfs import LoopFs  # noqa: E402

NAME = "browser tier"
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

checks = fixture.Registry()


@checks
def check_listed(session, checks):
    page = session.page
    states = {str(m): page.wait_state(m, lambda s: s == "scheduled") for m in session.mounts}
    checks.check(all(s == "scheduled" for s in states.values()),
                 "the page lists the test's filesystems as scheduled", str(states))
    page.shot("1-scheduled")


@checks
def check_pass(session, checks):
    page, bus, mount = session.page, session.bus, session.mounts[0]
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


def ensure_a_pass(session, mount):
    """A finished pass on `mount` (check_pass made one, unless this check runs alone)."""
    bus = session.bus
    path = bus.filesystem_path(mount)
    if bus.get(path, FS, "LastTrimEnd") in (None, "0"):
        bus.busctl("call", "org.trimd.trimd1", path, FS, "Trim", "b", "true")
        kit.wait_for(lambda: bus.get(path, FS, "LastTrimEnd") not in (None, "0"), 60)
        session.page.load()


@checks
def check_history(session, checks):
    page, mount = session.page, session.mounts[0]
    ensure_a_pass(session, mount)
    passes = page.open_history(mount)
    bars = page.chart_bars(mount)
    checks.check(passes >= 1 and bars == passes, "the history chart draws a bar per pass",
                 f"passes {passes}, bars {bars}")
    page.shot("3-history")


@checks
def check_cancel(session, checks):
    page, bus, mount = session.page, session.bus, session.mounts[1]
    page.click_card(mount, "ignore-idle")
    page.click_card(mount, "trim")
    started = page.wait_state(mount, lambda s: s == "trimming") == "trimming"
    page.click_card(mount, "cancel")
    path = bus.filesystem_path(mount)
    result = kit.wait_for(lambda: bus.get(path, FS, "LastResult") == "cancelled", 10)
    shown = kit.wait_for(lambda: "(cancelled)" in page.card_text(mount), 10)
    checks.check(started and result and shown,
                 "Cancel on a card ends its pass: LastResult cancelled on the bus and on the page",
                 f"started {started}, LastResult {bus.get(path, FS, 'LastResult')}")


@checks
def check_takeover(session, checks):
    """A filesystem mounted with discard: Take over remounts it without, Hand back with."""
    page, bus, mount = session.page, session.bus, session.inline.mount_point
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
                 "Hand back on the page gives discard back",
                 f"Takeover {bus.get(path, FS, 'Takeover')}")


@checks
def check_axe(session, checks):
    violations = session.page.axe(session.args.axe)
    bad = [v for v in violations if v.get("impact") in ("serious", "critical")]
    checks.check(not bad, f"axe-core: no serious or critical violation ({len(violations)} in all)",
                 "\n".join(f"{v['id']} ({v['impact']}): {v['help']}" for v in bad))


@checks
def check_pause(session, checks):
    page, bus = session.page, session.bus
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


@checks
def check_mount_comes_and_goes(session, checks):
    page, work = session.page, session.work
    fs = LoopFs.create(session.cleanup, work / "c.img", 64, work / "mnt" / "c",
                       mkfs_args=["-b", "1024"])
    appeared = page.wait_state(fs.mount_point, lambda s: s is not None)
    checks.check(appeared is not None, "a filesystem mounted while the page is open appears",
                 f"state {appeared}")
    page.shot("5-mounted")
    kit.run(["umount", str(fs.mount_point)])
    gone = kit.wait_for(lambda: page.card_state(fs.mount_point) is None, 15)
    checks.check(gone, "and disappears on umount")


@checks
def check_read_only(session, checks):
    bus, mount = session.bus, session.mounts[0]
    ws = kit.CockpitWs(session.cleanup, bus, session.data_dir, session.work, uid=kit.NOBODY)
    page = Page(session.driver, ws.url, session.args.artefacts, "nobody-")
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


@checks
def check_not_running(session, checks):
    page, trimd, mount = session.page, session.trimd, session.mounts[0]
    trimd.stop()
    try:
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
        checks.check("Could not start trimd.service" in alert, "a failed start is shown in words",
                     alert)
    finally:
        trimd.start(session.kept)
        session.handle["trimd"] = trimd.pid
        session.save_handle()
    back = page.wait_state(mount, lambda s: s is not None)
    ok = checks.check(back is not None and not page.visible("not-running"),
                      "trimd back: its filesystems return without a reload",
                      f"state {back}, summary {page.summary()!r}, "
                      f"not-running shown {page.visible('not-running')}")
    if not ok:
        page.shot("fail-trimd-back")


@checks
def check_no_script_error(session, checks):
    """Every error the page logged since the browser's log was last read
    (in a whole run: since the setup)."""
    errors = [e["message"] for e in session.driver.get_log("browser") if e["level"] == "SEVERE"]
    checks.check(not errors, "the page threw no JavaScript error", "\n".join(errors))


def add_arguments(parser):
    parser.add_argument("--build", help="the build directory (cmake --install)")
    parser.add_argument("--trimd", help="the trimd binary")
    parser.add_argument("--bus-config", help="the system-like bus configuration "
                        "(tests/common/bus-system.conf in the build directory)")
    parser.add_argument("--artefacts", type=Path, help="where screenshots go")
    parser.add_argument("--axe", type=Path,
                        default=Path(os.environ.get(
                            "TRIMD_AXE_JS", "/var/cache/trimd-browser/node_modules/axe-core/axe.min.js")))


def missing(args):
    if not (args.build and args.trimd and args.bus_config and args.artefacts):
        return "--build, --trimd, --bus-config and --artefacts are needed"
    return kit.missing_prerequisite(args.axe)


def setup(kept, args):
    holder = kit.start_namespaces(kept)
    kit.enter_namespaces(holder)
    work = Path(tempfile.mkdtemp(prefix="trimd-browser-"))
    os.chmod(work, 0o755)  # cockpit-ws as nobody reads the page and the bus socket here
    kept.push(f"remove {work}", Undo.remove(work))
    args.artefacts.mkdir(parents=True, exist_ok=True)
    for old in args.artefacts.glob("*.png"):  # the screenshots there are this run's
        old.unlink()
    data_dir = work / "prefix" / "share"
    kit.run(["cmake", "--install", args.build, "--component", "cockpit",
             "--prefix", str(work / "prefix")])
    bus = kit.Bus.start(kept, args.bus_config, work)
    mounts = [work / "mnt" / name for name in ("a", "b")]
    for m in mounts:
        LoopFs.create(kept, work / f"{m.name}.img", 256, m, mkfs_args=[
            "-b", "1024", "-E", "lazy_itable_init=0,lazy_journal_init=0,nodiscard"])
    inline = LoopFs.create(kept, work / "d.img", 64, work / "mnt" / "d", options="discard")
    trimd = kit.Trimd(args.trimd, bus, work)
    trimd.config.write_text(FS_CONFIG.format(work=work))
    trimd.start(kept)
    ws = kit.CockpitWs(kept, bus, data_dir, work)
    browser = kit.start_browser(kept, work)
    return {"holder": holder, "work": str(work), "bus": bus.address, "trimd": trimd.pid,
            "ws_port": ws.port, "browser": browser, "mounts": [str(m) for m in mounts],
            "inline": inline.handle()}


def enter(handle):
    if "holder" in handle and Path(f"/proc/{handle['holder']}").exists():
        kit.enter_namespaces(handle["holder"])


def connect(session):
    h, args = session.handle, session.args
    session.work = Path(h["work"])
    session.data_dir = session.work / "prefix" / "share"
    session.bus = kit.Bus(h["bus"])
    session.trimd = kit.Trimd(args.trimd, session.bus, session.work, pid=h["trimd"])
    session.mounts = [Path(m) for m in h["mounts"]]
    session.inline = LoopFs(**h["inline"])
    session.driver = kit.attach_browser(h["browser"])
    session.page = Page(session.driver, kit.url_of(h["ws_port"]), args.artefacts, "")
    session.page.load()
    for mount in session.mounts:  # the page has drawn what trimd had when it loaded
        session.page.wait_state(mount, lambda s: s is not None)


if __name__ == "__main__":
    sys.exit(fixture.main(sys.modules[__name__]))
