"""The boot tier's look at [fleet] under the hardened unit: without the
shipped drop-in trimd cannot reach etcd (the unit allows no TCP/IP), with it
(IPAddressAllow= naming the etcd member) it can, and a pass holds a slot.
etcd runs on the host's loopback, which the container shares."""

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from boot_root import message_id, run

FLEET_DROPIN = "/usr/share/doc/trimd/trimd-fleet.conf"  # systemd/trimd-fleet.conf
SLOT_ACQUIRED_ID = message_id("FleetSlotAcquired")  # lib/base/event_ids.def, trimd(8)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        deadline = time.monotonic() + 20
        while run(["etcdctl", "--endpoints", url, "endpoint", "health"], check=False,
                  env={"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"}).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError("etcd did not become healthy")
            time.sleep(0.2)

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


def check_fleet_dropin(box, checks, cleanup, pass_config, mount_point):
    started = time.monotonic()
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
    acquired = box.sh(f"journalctl --no-pager -o cat -u trimd.service MESSAGE_ID={SLOT_ACQUIRED_ID}",
                      check=False).stdout
    checks.check(trim.returncode == 0 and "holds a slot of pool-a" in acquired,
                 f"a pass with [fleet] holds a slot of pool-a ({time.monotonic() - started:.0f} s)",
                 trim.stdout[-500:] + acquired[-500:])
    restore()
    etcd.stop()
