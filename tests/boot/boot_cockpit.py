"""The boot tier's look at trimd-cockpit: Cockpit's socket in the booted
container on a loopback port, and a real login to it in Chromium on the host
(cockpit_login.py, with Debian's /usr/bin/python3 and python3-selenium)."""

import json
import secrets
import time
from pathlib import Path

from boot_context import TRIMTEST, check, ensure_running, grant_trimd_group
from boot_root import run
from pykit.net import free_port


class CockpitLogin:
    """trimd-cockpit in the container: Cockpit's socket on a free loopback
    port of the host (the container shares its network) instead of every
    address's 9090, and a password for alice to log in with."""

    def __init__(self, deb):
        self.deb = deb
        self.password = secrets.token_hex(12)
        self.port = free_port()

    def configure(self, root):
        dropin = root / "etc/systemd/system/cockpit.socket.d"
        dropin.mkdir(parents=True, exist_ok=True)
        (dropin / "boot-test.conf").write_text(
            f"[Socket]\nListenStream=\nListenStream=127.0.0.1:{self.port}\n")
        (root / "etc/cockpit/cockpit.conf").write_text("[WebService]\nAllowUnencrypted=true\n")


@check
def check_cockpit(session, checks):
    """alice logs in to Cockpit in Chromium and opens Trim: the page lists the
    bound filesystem, and (the sample polkit rule grants her group, as
    check_polkit shows) lets her act."""
    box, mount_point, artefacts = session.box, TRIMTEST, session.args.artefacts
    cockpit = session.handle["cockpit"]
    started = time.monotonic()
    ensure_running(box)
    grant_trimd_group(box)
    box.sh("systemctl restart cockpit.socket")
    shot = str(artefacts / "boot-cockpit.png") if artefacts else None
    helper = Path(__file__).resolve().parent / "cockpit_login.py"
    out = run(["/usr/bin/python3", str(helper), "--url", f"http://127.0.0.1:{cockpit['port']}",
               "--user", "alice", "--password", cockpit["password"], "--mount", mount_point]
              + (["--screenshot", shot] if shot else []), check=False, timeout=180).stdout
    lines = out.strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        report = {}
    checks.check(report.get("state") is not None and report.get("can_manage") is True
                 and report.get("read_only_note") is False,
                 f"Cockpit: alice logs in and the Trim page lists {mount_point} with her actions "
                 f"enabled ({time.monotonic() - started:.0f} s)", out[-2000:])
    if shot:
        print(f"screenshot: {shot}", flush=True)
