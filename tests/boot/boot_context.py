"""What the boot tier's checks share: the registry every check module adds
to (@check), the booted container's layout (mount points, trimd's policy)
and small readers of systemd's and trimctl's answers.

Adding a check (HACKING.md, "Add a boot check"): a function
`def check_NAME(session, checks)` marked @check in a boot_*.py module that
test_boot.py lists in CHECK_MODULES. It becomes the ctest test boot_NAME
at the next cmake configure. It gets session.box (the Container),
session.fs / session.inline (the bound loop filesystems), session.cockpit,
session.cleanup (undone when the check ends) and a pykit Checks; it starts
from trimd.service running with PASS_CONFIG and leaves it so."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pykit.fixture import Registry  # noqa: E402

check = Registry()

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
INSTALLED_RULE = "/etc/polkit-1/rules.d/50-trimd.rules"


def show(box, unit, *props):
    """`systemctl show` of `props` as a dict."""
    out = box.sh(f"systemctl show {unit} " + " ".join(f"-p {p}" for p in props)).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def ensure_running(box):
    """trimd.service started (a no-op when it runs): the state every check starts from."""
    box.sh("systemctl start trimd.service")


def trimctl_json(box, mount_point):
    """trimctl --json status's object for `mount_point`, or None."""
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


def journal(box, *matches, unit="trimd.service"):
    """The journal entries of `unit` that match (FIELD=value ...), as dicts."""
    out = box.sh(f"journalctl --no-pager -o json -u {unit} " + " ".join(matches), check=False)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def grant_trimd_group(box):
    """alice in group trimd and the sample polkit rule installed (both idempotent)."""
    box.sh("getent group trimd >/dev/null || groupadd --system trimd; "
           f"usermod -a -G trimd alice && cp {POLKIT_RULE} {INSTALLED_RULE}")
