"""Images, loop devices, mounts and slowtrim, each as a context manager
that tears down what it set up, in the only order that works: filesystem,
loop device, then slowtrim (an attached loop keeps the FUSE file busy)."""
import contextlib
import json
import os
import signal
import subprocess
import threading
import time

from .guard import EMULATOR_NICE, HarnessError, run, say, signals_blocked, spawn, stop, wait_until

MiB = 1024 * 1024
GiB = 1024 * MiB

MKFS = {
    # Inode tables and journal zeroed now: no ext4lazyinit writing later,
    # which would keep the disk from ever looking idle.
    "ext4": ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0,nodiscard"],
    "xfs": ["mkfs.xfs", "-q", "-f", "-K"],
    "btrfs": ["mkfs.btrfs", "-q", "-f", "--nodiscard"],
}


def allocated(path):
    """What the (sparse) backing file really occupies, in bytes."""
    return os.stat(path).st_blocks * 512


def make_image(path, size, fs_type):
    with open(path, "wb") as f:
        f.truncate(size)
    with loop_device(path) as dev:
        run(MKFS[fs_type] + [dev])


def make_twin(template, path):
    """A sparse copy: both twins of a comparison are made this way, so that
    all-zero blocks are dropped from every one alike (docs/design.md)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    run(["cp", "--sparse=always", template, path])


def _loop_name(dev):
    return os.path.basename(dev)


def loop_attached(dev):
    return os.path.exists(f"/sys/block/{_loop_name(dev)}/loop/backing_file")


def _detach(dev):
    try:
        run(["losetup", "-d", dev])
    except HarnessError as e:
        say(f"warning: {e}")
    try:
        wait_until(lambda: not loop_attached(dev), 30, what=f"{dev} to detach")
    except HarnessError as e:
        say(f"warning: {e}")


@contextlib.contextmanager
def loop_device(path, direct_io_off=False, partscan=False):
    """`partscan`: the kernel reads the partition table (/dev/loopNpM)."""
    args = ["losetup", "--find", "--show"]
    if direct_io_off:
        args.append("--direct-io=off")
    if partscan:
        args.append("--partscan")
    with signals_blocked():
        dev = run(args + [path]).strip()
    try:
        yield dev
    finally:
        with signals_blocked():
            _detach(dev)


def is_mounted(mount_point):
    real = os.path.realpath(mount_point)
    with open("/proc/self/mountinfo", errors="surrogateescape") as f:  # any bytes in names
        return any(_unescape(line.split()[4]) == real for line in f)


def _unescape(field):
    return field.encode().decode("unicode_escape") if "\\" in field else field


def _unmount(mount_point, busy_timeout):
    """Unmounts, waiting out EBUSY (a FITRIM still inside the kernel holds
    the filesystem); lazily as the very last resort."""
    deadline = time.monotonic() + busy_timeout
    warned = False
    while is_mounted(mount_point):
        done = subprocess.run(["umount", mount_point], capture_output=True, text=True)
        if done.returncode == 0:
            return
        if time.monotonic() >= deadline:
            say(f"warning: {mount_point} stays busy ({done.stderr.strip()}); lazy unmount")
            subprocess.run(["umount", "-l", mount_point], capture_output=True)
            return
        if not warned:
            say(f"{mount_point} is busy (a FITRIM may still run); waiting")
            warned = True
        time.sleep(0.5)


@contextlib.contextmanager
def mounted(dev, mount_point, options=None, busy_timeout=300):
    os.makedirs(mount_point, exist_ok=True)
    options = options or default_options(dev)
    args = ["mount"] + (["-o", options] if options else []) + [dev, mount_point]
    with signals_blocked():
        run(args)
    try:
        yield mount_point
    finally:
        with signals_blocked():
            _unmount(mount_point, busy_timeout)


def default_options(dev):
    """btrfs mounts with discard=async by default (kernel 6.2 and later) on
    a disk that takes discards, which would reclaim space behind the
    benchmark's back: every configuration without discard says so."""
    fs_type = run(["blkid", "-o", "value", "-s", "TYPE", dev]).strip()
    return "nodiscard" if fs_type == "btrfs" else None


@contextlib.contextmanager
def plain_fs(image, mount_point, options=None):
    """image -> loop -> mount, without slowtrim: fast set-up and checks."""
    with loop_device(image) as dev, mounted(dev, mount_point, options):
        yield dev


class SlowDisk:
    """A slowtrim instance over `backing`, and the loop device on its disk."""

    def __init__(self, binary, backing, work_dir, latency_ms, per_mib_ms, model="exclusive",
                 queue_depth=32):
        self.binary = binary
        self.backing = backing
        self.fuse_dir = os.path.join(work_dir, "fuse")
        self.stats_path = os.path.join(work_dir, "slowtrim.json")
        self.log_path = os.path.join(work_dir, "slowtrim.log")
        self.latency_ms = latency_ms
        self.per_mib_ms = per_mib_ms
        self.model = model
        self.queue_depth = queue_depth
        self.proc = None
        self.dev = None
        self.final = None

    def stats(self):
        """A fresh snapshot of the counters (SIGUSR1, then wait for it)."""
        before = self._read().get("sequence")
        self.proc.send_signal(signal.SIGUSR1)
        return wait_until(lambda: self._fresh(before), 10, what="slowtrim stats after SIGUSR1")

    def _fresh(self, before):
        snapshot = self._read()
        return snapshot if snapshot.get("sequence") not in (None, before) else None

    def _read(self):
        try:
            with open(self.stats_path) as f:
                return json.load(f)
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def diskstats(self):
        return read_diskstats(self.dev)

    @contextlib.contextmanager
    def attached(self, partscan=False):
        os.makedirs(self.fuse_dir, exist_ok=True)
        argv = EMULATOR_NICE + [self.binary, f"--model={self.model}",
                                f"--queue-depth={self.queue_depth}",
                                f"--discard-latency={self.latency_ms}",
                                f"--per-mib={self.per_mib_ms}", f"--stats={self.stats_path}",
                                "--stats-interval=1", self.backing, self.fuse_dir]
        self.proc = spawn(argv, log_path=self.log_path, stdout_path=self.log_path + ".out")
        try:
            disk = os.path.join(self.fuse_dir, "disk")
            wait_until(lambda: os.path.exists(disk) or self.proc.poll() is not None, 15,
                       what="slowtrim to mount")
            if self.proc.poll() is not None:
                raise HarnessError(f"slowtrim exited ({self.proc.returncode}); see {self.log_path}")
            with loop_device(disk, direct_io_off=True, partscan=partscan) as dev:
                self.dev = dev
                yield dev
        finally:
            with signals_blocked():
                self._stop()

    def _stop(self):
        # SIGINT, not SIGTERM: slowtrim unmounts and writes final stats for both.
        status = stop(self.proc, signal.SIGINT, grace=15.0)
        if is_mounted(self.fuse_dir):
            subprocess.run(["umount", "-l", self.fuse_dir], capture_output=True)
        self.final = self._read()
        if status != 0:
            say(f"warning: slowtrim exited with {status}; see {self.log_path}")


def read_diskstats(dev):
    """Counters of one block device from /proc/diskstats (discards in
    fields 15-18, docs/design.md)."""
    name = _loop_name(dev)
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == name:
                v = [int(x) for x in fields[3:]]
                return {"reads": v[0], "sectors_read": v[2], "writes": v[4],
                        "sectors_written": v[6], "in_flight": v[8], "io_ticks_ms": v[9],
                        "discards": v[11] if len(v) > 11 else 0,
                        "sectors_discarded": v[13] if len(v) > 13 else 0}
    raise HarnessError(f"{name} not in /proc/diskstats")


def discards_between(before, after):
    """What the device was sent between two read_diskstats(): the discard
    requests it completed (diskstats' discard ios) and their bytes."""
    return {"discards": after["discards"] - before["discards"],
            "bytes": (after["sectors_discarded"] - before["sectors_discarded"]) * 512}


def settled_diskstats(dev, timeout=30):
    """read_diskstats() once nothing is in flight on `dev` (xfs's FITRIM
    may return before its discards complete): the count is then final."""
    def idle():
        stats = read_diskstats(dev)
        return stats if stats["in_flight"] == 0 else None
    return wait_until(idle, timeout, what=f"{dev}'s requests in flight to complete")


class PeriodicSampler:
    """A thread that calls sample(wall time) every `interval` seconds while
    the `with` block runs, once more as it ends."""

    def __init__(self, interval):
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _loop(self):
        while True:
            self.sample(time.time())
            if self._stop.wait(self.interval):
                # What happened since the last tick: a pass that ended
                # 0.1 s after it would otherwise never show as reclaimed.
                self.sample(time.time())
                return

    def sample(self, now):
        raise NotImplementedError


class AllocationSampler(PeriodicSampler):
    """Samples a backing file's allocation in a thread: (wall time, bytes);
    with `dev`, that block device's /proc/diskstats too (io_samples)."""

    def __init__(self, path, interval=0.2, dev=None):
        super().__init__(interval)
        self.path = path
        self.dev = dev
        self.samples = []
        self.io_samples = []

    def sample(self, now):
        self.samples.append((now, allocated(self.path)))
        if self.dev:
            self.io_samples.append((now, read_diskstats(self.dev)))

    def first_at_or_below(self, level):
        """When the allocation first reached `level` (it only goes down)."""
        return first_at_or_below(self.samples, level)


def first_at_or_below(samples, level):
    """When (time, allocation) samples first reached `level`."""
    return next((t for t, value in samples if value <= level), None)


def last_busy(io_samples, before, max_iops, max_bytes, max_busy):
    """The last time before `before` that the disk was busy by trimd's idle
    limits (reads + writes per second, bytes per second, busy fraction,
    each over the second up to a sample): when its idle window could start
    at the earliest. None when it was never busy in the samples."""
    busy_at = None
    j = 0  # io_samples[j]: the latest sample at least a second before sample i
    for t, now in io_samples:
        if t >= before:
            break
        while j + 1 < len(io_samples) and t - io_samples[j + 1][0] >= 1.0:
            j += 1
        t0, then = io_samples[j]
        span = t - t0
        if span < 1.0:
            continue
        ios = now["reads"] + now["writes"] - then["reads"] - then["writes"]
        sectors = (now["sectors_read"] + now["sectors_written"]
                   - then["sectors_read"] - then["sectors_written"])
        ticks = now["io_ticks_ms"] - then["io_ticks_ms"]
        if (ios / span > max_iops or sectors * 512 / span > max_bytes
                or ticks / 1e3 / span > max_busy):
            busy_at = t
    return busy_at


def fstrim(mount_point):
    """Runs fstrim; returns (seconds, bytes it reported)."""
    start = time.monotonic()
    out = run(["fstrim", "-v", mount_point])
    elapsed = time.monotonic() - start
    return elapsed, fstrim_bytes(out)


def commit(mount_point):
    """Puts the filesystem in the state of one in use: a small file written
    and a transaction committed. On btrfs that sets up allocation clusters,
    whose free space no FITRIM reaches (docs/design.md)."""
    path = os.path.join(mount_point, ".bench-in-use")
    with open(path, "wb") as f:
        f.write(os.urandom(64 * 1024))
        os.fsync(f.fileno())
    os.sync()


STEP = 64 * MiB


def fstrim_stepped(mount_point, size, step=STEP):
    """fstrim over [0, size) in ranges of `step`: on xfs, ranges that do
    not cover a whole AG reach free extents a whole-AG FITRIM skips."""
    for offset in range(0, size, step):
        # The filesystem may end short of the device (xfs rounds to AGs):
        # a range past its end is refused, and that is fine.
        run(["fstrim", "-o", str(offset), "-l", str(step), mount_point], check=offset == 0)


def fstrim_stepped_command(mount_point, size, step=STEP):
    """The same as one shell command, to be timed as one child."""
    return ["sh", "-c", f'for o in $(seq 0 {step} {size - 1}); do '
                        f'fstrim -o "$o" -l {step} "$1" 2>/dev/null; done; true', "sh", mount_point]


def fstrim_bytes(out):
    # "/mnt: 1.6 GiB (1728655360 bytes) trimmed"
    if "(" in out and " bytes)" in out:
        return int(out.split("(")[1].split(" bytes)")[0])
    return None


def leftovers(work_dir):
    """Mounts under the work dir and loop devices backed by files in it."""
    prefix = os.path.realpath(work_dir) + "/"
    mounts = []
    with open("/proc/self/mountinfo", errors="surrogateescape") as f:  # any bytes in names
        for line in f:
            point = _unescape(line.split()[4])
            if point.startswith(prefix):
                mounts.append(point)
    loops = []
    for name in os.listdir("/sys/block"):
        backing = f"/sys/block/{name}/loop/backing_file"
        with contextlib.suppress(OSError):
            with open(backing) as f:
                if f.read().strip().startswith(prefix):
                    loops.append("/dev/" + name)
    return mounts, loops


def clear_leftovers(mounts, loops):
    for point in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)
    for dev in loops:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
