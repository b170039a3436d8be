"""The boot tier's machinery: a Debian 12 root on a loop-backed ext4 of its
own, booted with systemd-nspawn, commands run inside with nsenter. Every
resource is registered with a Cleanup stack, undone in reverse on any exit."""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

# trimd's MESSAGE_IDs, read from the list its C++ is built from.
sys.path.append(str(Path(__file__).resolve().parents[2] / "bench" / "lib"))
from message_ids import message_id  # noqa: E402,F401  (re-exported)

SUITE = "bookworm"
# What the root holds besides minbase and trimd's own dependencies: systemd
# as PID 1, the system bus and polkit; Cockpit for trimd-cockpit's page.
ROOT_PACKAGES = ["systemd", "dbus", "polkitd", "pkexec", "util-linux", "e2fsprogs", "cockpit"]
CACHE_DIR = Path("/var/cache/trimd-boot")


def run(argv, check=True, timeout=600, **kwargs):
    return subprocess.run(argv, check=check, timeout=timeout, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)


class Cleanup:
    """Undo steps, run last-in first-out; each runs even if another fails."""

    def __init__(self):
        self.steps = []

    def push(self, what, fn):
        self.steps.append((what, fn))

    def run_all(self):
        while self.steps:
            what, fn = self.steps.pop()
            try:
                fn()
            except Exception as error:  # keep undoing the rest
                print(f"cleanup: {what}: {error}")


def wait_for(predicate, timeout, step=0.2):
    """predicate()'s first true value within `timeout` seconds, else its last."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


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


class LoopFs:
    """A sparse file with an ext4 on a loop device, mounted at `mount_point`."""

    def __init__(self, cleanup, backing, size_mib, mount_point, mkfs_args=(), options="nodiscard"):
        self.backing = Path(backing)
        self.mount_point = Path(mount_point)
        run(["truncate", "-s", f"{size_mib}M", str(self.backing)])
        cleanup.push(f"remove {self.backing}", lambda: self.backing.unlink(missing_ok=True))
        self.device = run(["losetup", "--find", "--show", str(self.backing)]).stdout.strip()
        cleanup.push(f"detach {self.device}", lambda: run(["losetup", "-d", self.device], check=False))
        run(["mkfs.ext4", "-q", "-F", *mkfs_args, self.device])
        self.mount_point.mkdir(parents=True, exist_ok=True)
        run(["mount", "-o", options, self.device, str(self.mount_point)])
        cleanup.push(f"unmount {self.mount_point}",
                     lambda: run(["umount", "-l", str(self.mount_point)], check=False))

    def options(self):
        """(per-mount options, superblock options) of the mount, as this
        process's mount namespace (the host's) sees them."""
        found = None
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                if fields[4] == str(self.mount_point):
                    found = (fields[5].split(","), fields[-1].split(","))
        return found

    def allocated_bytes(self):
        return os.stat(self.backing).st_blocks * 512


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

    def __init__(self, cleanup, slowtrim, work, size_mib, files, file_bytes, mount_point,
                 latency_ms=3):
        self.backing = Path(work) / "slow.img"
        self.mount_point = Path(mount_point)
        fuse_dir = Path(work) / "slow-fuse"
        cleanup.push(f"remove {self.backing}", lambda: self.backing.unlink(missing_ok=True))
        fill_every_other(self.backing, size_mib, files, file_bytes, Path(work) / "slow-fill")
        fuse_dir.mkdir()
        self.slowtrim = subprocess.Popen(
            [slowtrim, f"--discard-latency={latency_ms}", "--per-mib=0.1", str(self.backing),
             str(fuse_dir)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            start_new_session=True)
        cleanup.push("stop slowtrim", lambda: self._stop_slowtrim(fuse_dir))
        disk = fuse_dir / "disk"
        deadline = time.monotonic() + 15
        while not disk.exists():
            if time.monotonic() > deadline or self.slowtrim.poll() is not None:
                raise RuntimeError("slowtrim did not serve " + str(disk))
            time.sleep(0.1)
        self.device = run(["losetup", "--find", "--show", "--direct-io=off", str(disk)]).stdout.strip()
        cleanup.push(f"detach {self.device}", self._detach)
        self.mount_point.mkdir(parents=True, exist_ok=True)
        run(["mount", "-o", "nodiscard", self.device, str(self.mount_point)])
        cleanup.push(f"unmount {self.mount_point}", self._unmount)

    def _unmount(self):
        if run(["umount", str(self.mount_point)], check=False).returncode != 0:
            run(["umount", "-l", str(self.mount_point)], check=False)

    def _detach(self):
        """Detached before slowtrim stops: a loop still on the FUSE file
        would leave slowtrim's mount dead."""
        run(["losetup", "-d", self.device], check=False)
        attached = Path("/sys/block") / Path(self.device).name / "loop/backing_file"
        deadline = time.monotonic() + 15
        while attached.exists() and time.monotonic() < deadline:
            time.sleep(0.1)

    def _stop_slowtrim(self, fuse_dir):
        if self.slowtrim.poll() is None:
            self.slowtrim.send_signal(signal.SIGINT)  # slowtrim unmounts its FUSE mount on SIGINT
            try:
                self.slowtrim.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.slowtrim.kill()
                self.slowtrim.wait(timeout=15)
        run(["umount", "-l", str(fuse_dir)], check=False)  # when slowtrim could not


class Container:
    """systemd-nspawn -b of `root`; `sh()` runs a command inside with nsenter."""

    def __init__(self, cleanup, root, name, binds, log_path):
        self.root = root
        self.log = open(log_path, "w")
        argv = ["systemd-nspawn", "-b", "-D", str(root), "--keep-unit", "--register=no",
                f"--machine={name}", "--console=passive"]
        argv += [f"--bind={host}:{inside}" for host, inside in binds]
        self.nspawn = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        cleanup.push("power off the container", self.power_off)
        self.leader = self._find_leader()

    def _find_leader(self, timeout=60):
        """The container's PID 1: a descendant of nspawn that is PID 1 in its namespace."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.nspawn.poll() is not None:
                raise RuntimeError(f"systemd-nspawn exited with {self.nspawn.returncode}")
            for pid in descendants(self.nspawn.pid):
                if inner_pid(pid) == 1:
                    return pid
            time.sleep(0.1)
        raise RuntimeError("no container PID 1 appeared")

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
            if time.monotonic() > deadline or self.nspawn.poll() is not None:
                return "no systemd manager socket"
            time.sleep(0.2)
        out = self.sh("systemctl is-system-running --wait", check=False, timeout=timeout)
        return out.stdout.strip()

    def power_off(self):
        if self.nspawn.poll() is None:
            # nspawn turns SIGTERM into a clean poweroff of the container.
            self.nspawn.send_signal(signal.SIGTERM)
            try:
                self.nspawn.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.nspawn.pid, signal.SIGKILL)
                self.nspawn.wait(timeout=30)
        self.log.close()


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
