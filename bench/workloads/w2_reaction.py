"""W2's reaction time: how long a chunk in the kernel stays in the way of
foreground I/O. trimd runs as a daemon with a short idle window; each time
one of its FITRIM runners is inside a chunk, one 4 KiB write + fdatasync
goes to the filesystem, and the time from issuing it to the runner's exit
(trimd's structured "preempted" record, see lib/trimd.py) is one sample.
"""
import os
import random
import time

from lib import disks, guard, trimd
from lib.guard import say


def _runner_of(pid):
    """trimd's FITRIM runner (its only kind of child), or None."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = f.read().split()
    except OSError:
        return None
    return int(children[0]) if children else None


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _one_write(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.pwrite(fd, os.urandom(4096), random.randrange(256) * 4096)
        os.fdatasync(fd)
    finally:
        os.close(fd)


def run(bench, template, samples, attempts=3):
    """Up to `samples` reaction times in ms, plus what trimd recorded. A pass
    can end before a write lands in a chunk (small images, a slow machine):
    then a fresh twin and a fresh daemon try again, up to `attempts` times."""
    out = {"samples_ms": [], "missed": 0, "preemptions": [], "passes": 0}
    while len(out["samples_ms"]) < samples and out["passes"] < attempts:
        _one_pass(bench, template, samples, out)
        out["passes"] += 1
    say(f"W2 reaction: {len(out['samples_ms'])} samples in {out['passes']} passes, "
        f"{out['missed']} chunks ended first")
    return out


def _one_pass(bench, template, samples, out):
    """Samples from one daemon's pass over a fresh twin, appended to `out`."""
    name = f"w2-reaction-{out['passes']}"
    twin = bench.image(name)
    disks.make_twin(template, twin)
    disk = bench.slow_disk(twin, name)
    mnt = bench.mnt("w2")
    log_path = os.path.join(bench.raw("W2", "reaction"), f"trimd-{out['passes']}.log")
    try:
        with disk.attached() as dev, disks.mounted(dev, mnt):
            with trimd.daemon(bench.trimd, bench.trimd_config("reaction"),
                              bench.state_dir(name), log_path) as proc:
                deadline = time.time() + 60 + samples * (bench.p.idle_window_s + 20)
                while len(out["samples_ms"]) < samples and time.time() < deadline:
                    sample = _sample(proc.pid, mnt, log_path)
                    if sample is None:
                        out["missed"] += 1
                    elif sample == "done":
                        break
                    else:
                        out["samples_ms"].append(sample)
            out["preemptions"] += trimd.preemptions(log_path)
    finally:
        os.unlink(twin)


def _poll(predicate, timeout, interval):
    """Like guard.wait_until, but False on timeout instead of raising."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
    return True


def _sample(pid, mnt, log_path):
    """One write into one chunk: ms from the write to the runner's exit, None
    when the chunk ended on its own first, "done" when the pass is over."""
    _poll(lambda: _runner_of(pid) or trimd.pass_ended(log_path), 120, 0.005)
    runner = _runner_of(pid)
    if runner is None:
        return "done"
    time.sleep(random.uniform(0.0, 0.05))  # somewhere inside the chunk
    if not _alive(runner):
        return None
    seen = len(trimd.preemptions(log_path))
    issued = time.time()
    _one_write(os.path.join(mnt, "reaction-probe"))
    guard.wait_until(lambda: not _alive(runner), 30, interval=0.002, what="the runner to exit")
    if not _poll(lambda: len(trimd.preemptions(log_path)) > seen, 2, 0.01):
        return None  # the chunk finished on its own
    record = trimd.preemptions(log_path)[seen]
    return max(0.0, record["exited_at_us"] / 1e6 - issued) * 1000.0
