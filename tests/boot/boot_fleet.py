"""The boot tier's look at [fleet] under the hardened unit: without the
shipped drop-in trimd cannot reach etcd (the unit allows no TCP/IP), with it
(IPAddressAllow= naming the etcd member) it can, and a pass holds a slot.
etcd runs on the host's loopback, which the container shares."""

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from boot_context import PASS_CONFIG, TRIMTEST, check, ensure_running, journal
from boot_root import message_id, run, wait_for
from pykit.net import free_port

FLEET_DROPIN = "/usr/share/doc/trimd/trimd-fleet.conf"  # systemd/trimd-fleet.conf
SLOT_ACQUIRED_ID = message_id("FleetSlotAcquired")  # lib/base/event_ids.def, trimd(8)


class LoopbackEtcd:
    """One etcd member on free loopback ports, its data in a temporary dir."""

    def __init__(self, cleanup):
        self.port = free_port()
        data = Path(tempfile.mkdtemp(prefix="trimd-boot-etcd-", dir="/var/tmp"))
        cleanup.push(f"remove {data}", lambda: shutil.rmtree(data, ignore_errors=True))
        url = f"http://127.0.0.1:{self.port}"
        peer = f"http://127.0.0.1:{free_port()}"
        self.process = subprocess.Popen(
            ["etcd", "--name", "boot", "--data-dir", str(data), "--listen-client-urls", url,
             "--advertise-client-urls", url, "--listen-peer-urls", peer,
             "--initial-advertise-peer-urls", peer, "--initial-cluster", f"boot={peer}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cleanup.push("stop etcd", self.stop)
        self.url = url
        if not wait_for(lambda: run(["etcdctl", "--endpoints", url, "endpoint", "health"],
                                    check=False, env={"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"})
                        .returncode == 0, 20):
            raise RuntimeError("etcd did not become healthy")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def get_fleet(box):
    return box.sh("busctl call org.trimd.trimd1 /org/trimd/trimd1 org.trimd.trimd1.Manager GetFleet",
                  check=False)


@check
def check_fleet_dropin(session, checks):
    box, cleanup, pass_config, mount_point = session.box, session.cleanup, PASS_CONFIG, TRIMTEST
    started = time.monotonic()
    ensure_running(box)
    etcd = LoopbackEtcd(cleanup)
    config = box.root / "etc/trimd/trimd.toml"
    config.write_text(pass_config + f'\n[fleet]\netcd = ["{etcd.url}"]\nbackend = "pool-a"\n'
                      'lease_ttl = "5s"\n')
    dropin_dir = box.root / "etc/systemd/system/trimd.service.d"
    dropin = dropin_dir / "fleet.conf"

    restored = []

    def restore():
        if restored:
            return
        restored.append(True)
        dropin.unlink(missing_ok=True)
        config.write_text(pass_config)
        box.sh("systemctl daemon-reload && systemctl restart trimd.service", check=False)
    cleanup.push("trimd without [fleet]", restore)

    box.sh("systemctl restart trimd.service")
    blocked = get_fleet(box)
    # busctl prints the error's message, not its name: GetFleet's Unavailable says "etcd: ...".
    checks.check(blocked.returncode != 0 and "etcd: " in blocked.stdout,
                 "[fleet] under the plain unit: etcd unreachable (no TCP/IP allowed)",
                 blocked.stdout[-800:])

    shipped = (box.root / FLEET_DROPIN.lstrip("/")).read_text()
    ours = "\n".join("IPAddressAllow=127.0.0.1" if line.startswith("IPAddressAllow=") else line
                     for line in shipped.splitlines())
    dropin.write_text(ours + "\n")
    box.sh("systemctl daemon-reload && systemctl restart trimd.service")
    allowed = get_fleet(box)
    checks.check(allowed.returncode == 0,
                 "[fleet] with the shipped drop-in (IPAddressAllow= the member): GetFleet answers",
                 allowed.stdout[-800:])
    trim = box.sh(f"trimctl trim --wait --ignore-idle {mount_point}", check=False, timeout=120)
    acquired = [e for e in journal(box, f"MESSAGE_ID={SLOT_ACQUIRED_ID}")
                if e.get("BACKEND") == "pool-a" and e.get("MOUNT_POINT") == mount_point]
    checks.check(trim.returncode == 0 and acquired,
                 f"a pass with [fleet] holds a slot of pool-a ({time.monotonic() - started:.0f} s)",
                 trim.stdout[-500:] + str(acquired)[-500:])
    restore()
    etcd.stop()
