"""The boot tier's machinery: a Debian 12 root (debootstrapped once,
cached), the slow-TRIM filesystem, and the root booted with systemd-nspawn,
commands run inside with nsenter. Everything made is pushed as an Undo step
to the fixture's kept cleanup (tests/pykit), which the cleanup test runs."""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pykit.cleanup import Undo  # noqa: E402
from pykit.proc import run, wait_for  # noqa: E402,F401  (run re-exported)

# trimd's MESSAGE_IDs, read from the list its C++ is built from.
sys.path.append(str(Path(__file__).resolve().parents[2] / "bench" / "lib"))
from message_ids import message_id  # noqa: E402,F401  (re-exported)

SUITE = "bookworm"
# What the root holds besides minbase and trimd's own dependencies: systemd
# as PID 1, the system bus and polkit; Cockpit for trimd-cockpit's page.
ROOT_PACKAGES = ["systemd", "dbus", "polkitd", "pkexec", "util-linux", "e2fsprogs", "cockpit"]
CACHE_DIR = Path("/var/cache/trimd-boot")


def debian_mirror():
    """The Debian archive apt already uses (deb822 .sources or one-line lists)."""
    files = [Path("/etc/apt/sources.list")] + sorted(Path("/etc/apt/sources.list.d").glob("*"))
    for path in files:
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for stanza in re.split(r"\n\s*\n", text):
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            suites = re.search(r"^Suites:\s*(.+)$", stanza, re.M)
            if uris and suites and SUITE in suites.group(1).split():
                return uris.group(1)
        for line in text.splitlines():
            m = re.match(r"\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+" + SUITE + r"\s", line)
            if m:
                return m.group(1)
    return "http://deb.debian.org/debian"


def deb_dependencies(deb):
    """Package names in the .deb's Depends (first of alternatives, no versions)."""
    depends = run(["dpkg-deb", "-f", str(deb), "Depends"]).stdout
    names = [re.split(r"[\s(:]", alt.split("|")[0].strip())[0] for alt in depends.split(",")]
    return sorted(name for name in names if name)


def root_cache_key(packages):
    return hashlib.sha256(" ".join([SUITE] + packages).encode()).hexdigest()[:12]


def install_root_packages(root, mirror, packages):
    """apt-get in the chroot (debootstrap --include cannot resolve polkitd's alternatives)."""
    (root / "etc/apt/sources.list").write_text(f"deb {mirror} {SUITE} main\n")
    shutil.copy("/etc/resolv.conf", root / "etc/resolv.conf")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["chroot", str(root), "apt-get", "update", "-q"], env=env, timeout=900)
    run(["chroot", str(root), "apt-get", "install", "-y", "-q", "--no-install-recommends",
         *packages], env=env, timeout=1800)
    run(["chroot", str(root), "apt-get", "clean"])


def cached_root_tarball(log, deb, seed=None):
    """A tar of the root, made once per package list: debootstrap minbase (or
    a copy of `seed`, a minbase root), then ROOT_PACKAGES and the .deb's
    dependencies (so that dpkg -i needs no network)."""
    packages = sorted(set(ROOT_PACKAGES) | set(deb_dependencies(deb)))
    tarball = CACHE_DIR / f"root-{SUITE}-{root_cache_key(packages)}.tar"
    if tarball.exists():
        log(f"root: cached {tarball}")
        return tarball
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    staging = CACHE_DIR / f"staging-{root_cache_key(packages)}-{os.getpid()}"
    mirror = debian_mirror()
    try:
        if seed:
            run(["cp", "-a", str(seed), str(staging)])
        else:
            log(f"root: debootstrap --variant=minbase {SUITE} from {mirror} (cached afterwards)")
            run(["debootstrap", "--variant=minbase", SUITE, str(staging), mirror], timeout=1800)
        install_root_packages(staging, mirror, packages)
        run(["tar", "-C", str(staging), "--numeric-owner", "-cf", str(tarball) + ".part", "."])
        os.replace(str(tarball) + ".part", tarball)
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"building the root failed: {error.cmd}\n{error.stdout[-2000:]}") from error
    finally:
        run(["rm", "-rf", str(staging), str(tarball) + ".part"], check=False)
    return tarball


def fill_every_other(backing, size_mib, files, file_bytes, mount_point):
    """A fresh ext4 in `backing` with `files` small files written one after
    the other and every other one deleted: files / 2 separate free extents,
    none trimmed yet. Mounted (mount -o loop: the loop goes with the mount)
    only while it is filled."""
    run(["truncate", "-s", f"{size_mib}M", str(backing)])
    run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0,nodiscard",
         str(backing)])
    mount_point.mkdir(parents=True, exist_ok=True)
    run(["mount", "-o", "loop,nodiscard", str(backing), str(mount_point)])
    try:
        block = os.urandom(file_bytes)
        for n in range(files):
            (mount_point / f"f{n}").write_bytes(block)
        run(["sync", "-f", str(mount_point)])
        for n in range(1, files, 2):
            (mount_point / f"f{n}").unlink()
        run(["sync", "-f", str(mount_point)])
    finally:
        run(["umount", str(mount_point)])


class SlowTrimFs:
    """An ext4 on the slow-TRIM device (bench/slowtrim, FUSE), mounted at
    `mount_point`: `files` small files written and every other one deleted,
    so that one FITRIM over it issues that many discards / 2, each taking
    `latency_ms`. Built on a plain loop first (fast), then served through
    slowtrim; torn down filesystem, loop, slowtrim, in that order."""

    def __init__(self, kept, slowtrim, work, size_mib, files, file_bytes, mount_point,
                 latency_ms=3):
        backing = Path(work) / "slow.img"
        self.mount_point = Path(mount_point)
        fuse_dir = Path(work) / "slow-fuse"
        kept.push(f"remove {backing}", Undo.remove(backing))
        fill_every_other(backing, size_mib, files, file_bytes, Path(work) / "slow-fill")
        fuse_dir.mkdir()
        with open(Path(work) / "slowtrim.log", "ab") as log:
            server = subprocess.Popen(
                [slowtrim, f"--discard-latency={latency_ms}", "--per-mib=0.1", str(backing),
                 str(fuse_dir)], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
        # slowtrim unmounts its FUSE mount on SIGINT; umount -l when it could not.
        kept.push(f"unmount {fuse_dir}", Undo.command(["umount", "-l", fuse_dir]))
        kept.push("stop slowtrim", Undo.process(server.pid, signal.SIGINT, grace=15))
        disk = fuse_dir / "disk"
        if not wait_for(lambda: disk.exists() or server.poll() is not None, 15, step=0.1) \
                or not disk.exists():
            raise RuntimeError("slowtrim did not serve " + str(disk))
        device = run(["losetup", "--find", "--show", "--direct-io=off", str(disk)]).stdout.strip()
        # Detached (and gone) before slowtrim stops: a loop still on the FUSE
        # file would leave slowtrim's mount dead.
        attached = Path("/sys/block") / Path(device).name / "loop/backing_file"
        kept.push(f"{device} detached", Undo.path_gone(attached, 15))
        kept.push(f"detach {device}", Undo.command(["losetup", "-d", device]))
        self.mount_point.mkdir(parents=True, exist_ok=True)
        run(["mount", "-o", "nodiscard", device, str(self.mount_point)])
        kept.push(f"unmount {self.mount_point}", Undo.command(
            ["sh", "-c", 'umount "$1" || umount -l "$1"', "umount", self.mount_point]))


class Container:
    """systemd-nspawn -b of `root`; `sh()` runs a command inside with nsenter.
    boot() starts it (and pushes its poweroff to the kept cleanup); attach()
    finds a running one again from its handle(), in another process."""

    def __init__(self, root, leader, nspawn_pid):
        self.root = Path(root)
        self.leader = leader
        self.nspawn_pid = nspawn_pid

    @classmethod
    def boot(cls, kept, root, name, binds, log_path):
        argv = ["systemd-nspawn", "-b", "-D", str(root), "--keep-unit", "--register=no",
                f"--machine={name}", "--console=passive"]
        argv += [f"--bind={host}:{inside}" for host, inside in binds]
        with open(log_path, "w") as log:
            nspawn = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
        # nspawn turns SIGTERM into a clean poweroff of the container.
        kept.push("power off the container",
                  Undo.process(nspawn.pid, signal.SIGTERM, grace=60, kill_group=True))
        return cls(root, _find_leader(nspawn), nspawn.pid)

    @classmethod
    def attach(cls, handle):
        return cls(handle["root"], handle["leader"], handle["nspawn"])

    def handle(self):
        return {"root": str(self.root), "leader": self.leader, "nspawn": self.nspawn_pid}

    def running(self):
        return Path(f"/proc/{self.nspawn_pid}").exists() and Path(f"/proc/{self.leader}").exists()

    def sh(self, command, check=True, timeout=120, user=None):
        argv = ["nsenter", "-t", str(self.leader), "-a"]
        if user:
            argv += ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups",
                     "--reset-env"]
        return run(argv + ["/bin/sh", "-c", command], check=check, timeout=timeout)

    def wait_booted(self, timeout=120):
        """systemd's state once the boot is over: running, or degraded."""
        deadline = time.monotonic() + timeout
        while self.sh("test -S /run/systemd/private", check=False).returncode != 0:
            if time.monotonic() > deadline or not self.running():
                return "no systemd manager socket"
            time.sleep(0.2)
        out = self.sh("systemctl is-system-running --wait", check=False, timeout=timeout)
        return out.stdout.strip()


def _find_leader(nspawn, timeout=60):
    """The container's PID 1: a descendant of nspawn that is PID 1 in its namespace."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if nspawn.poll() is not None:
            raise RuntimeError(f"systemd-nspawn exited with {nspawn.returncode}")
        for pid in descendants(nspawn.pid):
            if inner_pid(pid) == 1:
                return pid
        time.sleep(0.1)
    raise RuntimeError("no container PID 1 appeared")


def descendants(root_pid):
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                continue
    found, frontier = [], [root_pid]
    while frontier:
        current = frontier.pop()
        children = [pid for pid, parent in parents.items() if parent == current]
        found += children
        frontier += children
    return found


def inner_pid(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except OSError:
        pass
    return None
