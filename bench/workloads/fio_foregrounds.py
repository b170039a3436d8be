"""FIO, real foregrounds: fio jobs (Debian's fio, its JSON output) while a
delete storm frees space on the slow-TRIM device, for each peer that could
be trimming then.

Foregrounds (4 KiB, direct I/O on a file preallocated before the storm):
QD1 random writes each followed by fsync (a journal, a small database's
commit), QD32 random reads (seed 002's deep queue) and 70/30 random
read/write at QD8 (a database). Peers, each on a fresh twin: no trim (the
baseline), fstrim right after the storm, `-o discard`, trimd as a daemon,
and on btrfs `discard=async`, the kernel's own background discarder (with
its default limits and with a tuned iops_limit).

With `--param fio_split_cgroups=True`, fio runs in one blkio cgroup and
fstrim or trimd (its runners too) in another, so that the loop driver
gives them separate workers and the `queued` model shows (lib/blkio.py).
`-o discard` and btrfs's async discards are issued by the filesystem, not
by a process of the peer's, and stay where they are.

Each job runs `Params.fio_rounds` times per peer, the peers taking turns
(baseline first in each round), so that every peer's run has a baseline
run beside it; the report gives the median of those paired ratios with a
bootstrap interval (lib/ratios.py).
"""
import contextlib
import json
import os
import time

from lib import blkio, disks, guard, populate, trimd
from lib.context import drop_template
from lib.guard import HarnessError, say

NAME = "FIO"
TITLE = "fio foregrounds"

# Every job: 4 KiB random I/O with O_DIRECT on one preallocated file.
JOBS = {
    "qd1-randwrite-fsync": ["--rw=randwrite", "--iodepth=1", "--ioengine=psync", "--fsync=1"],
    "qd32-randread": ["--rw=randread", "--iodepth=32", "--ioengine=libaio"],
    "qd8-randrw-70-30": ["--rw=randrw", "--rwmixread=70", "--iodepth=8", "--ioengine=libaio"],
}
PERCENTILES = ("50.000000", "99.000000", "99.900000")
BASELINE = "notrim"
# btrfs's discard=async, tuned: its default kbps/iops limits pace discards
# by the queue's own delay; 1000 iops lets it catch up faster.
ASYNC_TUNED_IOPS = 1000


def peers_for(fs_type):
    peers = [BASELINE, "fstrim", "discard", "trimd"]
    if fs_type == "btrfs":
        peers += ["async", "async-tuned"]
    return peers


def mount_options(peer, fs_type):
    if peer == "discard":
        return "discard=sync" if fs_type == "btrfs" else "discard"
    if peer.startswith("async"):
        return "discard=async"
    return "nodiscard"


def run(bench):
    out = {"fs": {}}
    with blkio.groups() if bench.p.fio_split_cgroups else contextlib.nullcontext():
        for fs_type in bench.p.fio_fs:
            out["fs"][fs_type] = run_fs(bench, fs_type)
    return out


def cgroups(bench):
    """The foreground's and the trimmer's blkio cgroups; None: where the
    harness runs."""
    if bench.p.fio_split_cgroups:
        return blkio.FOREGROUND, blkio.TRIMMER
    return None, None


def make_template(bench, fs_type):
    p = bench.p
    path = bench.image(f"fio-{fs_type}-template")
    say(f"FIO {fs_type}: making the template ({p.fio_pairs} files to delete, as many kept, "
        f"a {p.fio_file_mib} MiB fio file)")
    disks.make_image(path, p.fio_image, fs_type)
    setup = bench.mnt("setup")
    with disks.plain_fs(path, setup):
        populate.interleaved_sets(setup, p.fio_pairs, populate.sizes_kib(4, 16))
        with open(os.path.join(setup, "fio.dat"), "wb") as f:
            chunk = os.urandom(1 << 20)
            for _ in range(p.fio_file_mib):
                f.write(chunk)
        guard.run(["sync"])
    bench.templates[f"fio-{fs_type}"] = path
    return path


def run_fs(bench, fs_type):
    template = make_template(bench, fs_type)
    out = {"jobs": {}}
    try:
        for job in bench.p.fio_jobs:
            runs = {peer: [] for peer in peers_for(fs_type)}
            for i in range(bench.p.fio_rounds):
                for peer in runs:
                    say(f"FIO {fs_type} {job}: {peer}, round {i + 1} of {bench.p.fio_rounds}")
                    runs[peer].append(run_one(bench, fs_type, template, job, peer, i))
            out["jobs"][job] = runs
    finally:
        drop_template(bench, f"fio-{fs_type}")
    return out


def run_one(bench, fs_type, template, job, peer, round_index):
    tag = f"fio-{fs_type}-{job}-{peer}-{round_index + 1}"
    twin = bench.image("fio-twin")
    disks.make_twin(template, twin)
    raw = bench.raw("FIO", tag)
    disk = bench.slow_disk(twin, tag)
    mnt = bench.mnt("fio")
    res = {}
    try:
        with disk.attached() as dev:
            with disks.mounted(dev, mnt, mount_options(peer, fs_type)):
                if peer == "async-tuned":
                    tune_async(dev, ASYNC_TUNED_IOPS)
                stats0 = disk.stats()
                res["fio"] = foreground_with_storm(bench, job, peer, mnt, raw)
                stats1 = disk.stats()
            res["slowtrim"] = bench.check_counters("FIO", tag, disk.stats(), stats0)
            res["discards_during"] = stats1.get("discards", 0) - stats0.get("discards", 0)
        res["alloc_end"] = disks.allocated(twin)
    finally:
        os.unlink(twin)
    return res


def tune_async(dev, iops):
    """discard=async's pacing lives in sysfs under the filesystem's fsid."""
    out = guard.run(["btrfs", "filesystem", "show", dev], capture=True)
    fsid = next(w for line in out.splitlines() for w in line.split() if w.count("-") == 4)
    path = f"/sys/fs/btrfs/{fsid}/discard/iops_limit"
    with open(path, "w") as f:
        f.write(str(iops))


def foreground_with_storm(bench, job, peer, mnt, raw):
    """fio for Params.fio_seconds; the storm (rm -r of one set + sync) after
    Params.fio_lead_s, then the peer's trim: fstrim at once, trimd as the
    daemon it is (started with the job: it waits for idle disks)."""
    p = bench.p
    out_path = os.path.join(raw, "fio.json")
    fg_group, trim_group = cgroups(bench)
    with contextlib.ExitStack() as stack:
        if peer == "trimd":
            stack.enter_context(trimd.daemon(bench.trimd, bench.trimd_config("daemon"),
                                             bench.state_dir("fio"),
                                             os.path.join(raw, "trimd.log"), trim_group))
        fio = guard.spawn(blkio.inside(fg_group, fio_command(job, mnt, p.fio_seconds, out_path)),
                          log_path=os.path.join(raw, "fio.log"))
        stack.callback(guard.stop, fio, grace=5.0)
        time.sleep(p.fio_lead_s)
        guard.run(["rm", "-r", os.path.join(mnt, "del")])
        guard.run(["sync"])
        if peer == "fstrim":
            fstrim = guard.spawn(blkio.inside(trim_group, ["fstrim", mnt]),
                                 log_path=os.path.join(raw, "fstrim.log"))
            stack.callback(guard.stop, fstrim, grace=1.0, hard_grace=600.0)
        guard.wait_until(lambda: fio.poll() is not None, p.fio_seconds + 120, interval=0.05,
                         what="fio")
        if fio.returncode != 0:
            raise HarnessError(f"fio exited {fio.returncode}; see {raw}/fio.log")
    with open(out_path) as f:
        return summary(json.load(f))


def fio_command(job, mnt, seconds, out_path):
    return (["fio", "--name=fg", f"--filename={os.path.join(mnt, 'fio.dat')}", "--bs=4k",
             "--direct=1", "--time_based", f"--runtime={seconds:g}", "--size=100%",
             "--percentile_list=50:99:99.9", "--output-format=json", f"--output={out_path}"]
            + JOBS[job])


def summary(fio_json):
    """Per direction (read, write, and fsync where the job has one): IOPS
    and completion-latency percentiles in ms."""
    job = fio_json["jobs"][0]
    out = {}
    for direction in ("read", "write"):
        d = job.get(direction, {})
        if d.get("total_ios"):
            out[direction] = {"iops": d.get("iops", 0.0),
                              **percentiles_ms(d.get("clat_ns", {}))}
    sync = job.get("sync", {})
    if sync.get("total_ios"):
        out["fsync"] = percentiles_ms(sync.get("lat_ns", {}))
    return out


def percentiles_ms(latency):
    pct = latency.get("percentile", {})
    return {name: pct.get(key, 0) / 1e6 for key, name in zip(PERCENTILES, ("p50", "p99", "p99.9"))}
