"""W4, footprint: trimd's memory (VmRSS, VmHWM) and CPU time (utime +
stime) while it watches many small idle filesystems (plain loop devices,
no slowtrim), then its CPU time per GiB trimmed in one --once pass over
all of them, and what fstrim still finds after that pass.
"""
import contextlib
import os
import time

from lib import disks, guard, populate, trimd
from lib.disks import GiB
from lib.guard import HarnessError, say

NAME = "W4"
TITLE = "footprint"
SAMPLE_EVERY = 1.0
SETTLE_S = 2.0  # after "trimd started": the first scans are start-up, not idling


def run(bench):
    p = bench.p
    images = [bench.image(f"w4-{i:02d}") for i in range(p.w4_count)]
    mounts = [bench.mnt(f"w4-{i:02d}") for i in range(p.w4_count)]
    say(f"W4: {p.w4_count} ext4 filesystems of {p.w4_image // disks.MiB} MiB on plain loops")
    out = {"count": p.w4_count, "image_bytes": p.w4_image}
    try:
        with contextlib.ExitStack() as stack:
            devs = []
            for image, mnt in zip(images, mounts):
                # One mkfs each, not twins: trimd tells filesystems apart by UUID.
                disks.make_image(image, p.w4_image, "ext4")
                devs.append(stack.enter_context(disks.plain_fs(image, mnt)))
                write_and_delete(mnt, p.w4_freed)
            guard.run(["sync"])
            out["idle"] = measure_idle(bench, mounts)
            out["pass"] = measure_pass(bench, mounts, devs, images)
    finally:
        for image in images:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(image)
    return out


def write_and_delete(mnt, size):
    """Space for the pass to reclaim: written (so allocated), then freed."""
    path = os.path.join(mnt, "freed.dat")
    populate.write_file(path, os.urandom(1024 * 1024), size)
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    os.unlink(path)


def sample(pid):
    status = trimd.status_kib(pid)
    return {"t": time.time(), "rss_kib": status.get("VmRSS"), "hwm_kib": status.get("VmHWM"),
            "cpu_s": trimd.cpu_seconds(pid)}


def measure_idle(bench, mounts):
    log_path = os.path.join(bench.raw("W4", "idle"), "trimd.log")
    with trimd.daemon(bench.trimd, bench.trimd_config("idle"), bench.state_dir("w4-idle"),
                      log_path) as proc:
        time.sleep(SETTLE_S)
        samples = [sample(proc.pid)]
        end = time.monotonic() + bench.p.w4_idle_s
        while time.monotonic() < end:
            time.sleep(min(SAMPLE_EVERY, max(0.0, end - time.monotonic())))
            samples.append(sample(proc.pid))
    tracked = trimd.tracked_count(log_path)
    bench.check("W4", f"trimd tracks all {len(mounts)} filesystems (and others here)",
                tracked is not None and tracked >= len(mounts), f"tracked={tracked}")
    events = trimd.parse_log(log_path)
    bench.check("W4", "no trimming while idle (nothing due)",
                not any(e["kind"] == "chunk" for e in events), "")
    first, last = samples[0], samples[-1]
    seconds = last["t"] - first["t"]
    cpu = last["cpu_s"] - first["cpu_s"]
    return {"samples": samples, "seconds": seconds, "cpu_s": cpu,
            "cpu_percent": 100.0 * cpu / seconds if seconds > 0 else None,
            "rss_max_kib": max(s["rss_kib"] or 0 for s in samples),
            "hwm_kib": last["hwm_kib"], "startup_cpu_s": first["cpu_s"], "tracked": tracked}


def measure_pass(bench, mounts, devs, images):
    log_path = os.path.join(bench.raw("W4", "pass"), "trimd.log")
    before = [disks.read_diskstats(d) for d in devs]
    alloc0 = sum(disks.allocated(i) for i in images)
    run = trimd.run_once(bench.trimd, bench.trimd_config("once"), bench.state_dir("w4-pass"),
                         log_path, mounts, timeout=600)
    alloc1 = sum(disks.allocated(i) for i in images)
    after = [disks.read_diskstats(d) for d in devs]
    discarded = sum((a["sectors_discarded"] - b["sectors_discarded"]) * 512
                    for a, b in zip(after, before))
    ends = [e for e in trimd.parse_log(log_path) if e["kind"] == "pass_end"]
    bench.check("W4", "trimd --once: a successful pass per filesystem",
                run["exit"] == 0 and sum(e["result"] == "success" for e in ends) == len(mounts),
                f"exit {run['exit']}, {len(ends)} passes")
    if discarded <= 0:
        raise HarnessError("trimd's pass over the W4 filesystems discarded nothing")
    for mnt in mounts:
        disks.fstrim(mnt)
    alloc2 = sum(disks.allocated(i) for i in images)
    return {"run": run, "bytes_discarded": discarded, "reclaimed": alloc0 - alloc1,
            "residual": alloc1 - alloc2, "alloc_after_trimd": alloc1, "alloc_after_fstrim": alloc2,
            "cpu_s_per_gib": run["cpu_s"] / (discarded / GiB), "passes": len(ends)}
