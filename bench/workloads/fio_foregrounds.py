"""FIO, real foregrounds: fio jobs (Debian's fio, its JSON output) beside a
delete storm on the slow-TRIM device, for each peer that could be
discarding then.

Foregrounds (4 KiB, direct I/O on a file preallocated before the storm):
QD1 random writes each followed by fsync (a journal, a small database's
commit), QD32 random reads (seed 002's deep queue) and 70/30 random
read/write at QD8 (a database).

Two timelines, each with its own baseline, because the peers discard at
different times and a peer measured while it is not discarding equals its
baseline by construction:

- "storm": fio starts, the storm (rm -r of one set + sync) comes
  Params.fio_lead_s later. Peers: no trim (the baseline), `-o discard`
  (pays at rm time) and fstrim (started right after the storm's sync).
- "trim": the storm first, then fio once the peer is discarding (the
  loop device's discard counter rose). Peers: no trim after the storm (the
  baseline: fio right after the sync), trimd (a daemon started after the
  sync with a short idle window, Params.fio_idle_window, so its pass starts
  soon; fio's first I/O then preempts the chunk in flight: fio arriving
  mid-pass) and on btrfs `discard=async` at the kernel's default limits
  (only for the jobs in Params.fio_async_jobs, none by default: it waits
  120 s after a block group's last change, and then never discards free
  extents under 32 KiB in a block group still in use, which is all this
  storm frees; the harness gives up waiting after ASYNC_WAIT_S).

With `--param fio_split_cgroups=True` (the default with `--model queued`),
fio runs in one blkio cgroup and fstrim or trimd (its runners too) in
another, so that the loop driver gives them separate workers and the
`queued` model shows for reads (lib/blkio.py). `-o discard` and btrfs's async discards are issued by the
filesystem, not by a process of the peer's, and stay where they are.

Each job runs Params.fio_rounds times per peer, the peers taking turns
(each timeline's baseline first in each round), so that every run has its
baseline's run of the same round beside it; the report gives the median of
those paired ratios with a bootstrap interval (lib/ratios.py).
"""
import contextlib
import json
import os
import time

from lib import blkio, disks, guard, populate, trimd
from lib.context import drop_template
from lib.guard import HarnessError, say
from workloads.w1_delete_storm import ASYNC_DELAY_S, ASYNC_FS

NAME = "FIO"
TITLE = "fio foregrounds"

# Every job: 4 KiB random I/O with O_DIRECT on one preallocated file.
JOBS = {
    "qd1-randwrite-fsync": ["--rw=randwrite", "--iodepth=1", "--ioengine=psync", "--fsync=1"],
    "qd32-randread": ["--rw=randread", "--iodepth=32", "--ioengine=libaio"],
    "qd8-randrw-70-30": ["--rw=randrw", "--rwmixread=70", "--iodepth=8", "--ioengine=libaio"],
    # Not in the default set: the reader docs/preemption.md's queued-TRIM
    # table measured. Uncapped, QD32 queues itself past preempt_latency.
    "qd32-randread-capped": ["--rw=randread", "--iodepth=32", "--ioengine=libaio",
                             "--rate_iops=1000"],
}
PERCENTILES = ("50.000000", "99.000000", "99.900000")
BASELINE = "notrim"              # the storm timeline's baseline
AFTER_BASELINE = "notrim-after"  # the trim timeline's
STORM_PEERS = (BASELINE, "discard", "fstrim")
TRIM_PEERS = (AFTER_BASELINE, "trimd", "async")
# How long a trim-timeline peer may take to send its first discard after
# the storm: trimd its idle window and a sample or two; async its delay.
TRIMD_WAIT_SLACK_S = 30.0
ASYNC_WAIT_S = ASYNC_DELAY_S + 80.0


def peers_for(fs_type, job, async_jobs):
    """Each round's order: every timeline's baseline before its peers."""
    peers = list(STORM_PEERS) + [AFTER_BASELINE, "trimd"]
    if fs_type in ASYNC_FS and job in async_jobs:
        peers.append("async")
    return peers


def baseline_for(peer):
    """The run a peer's ratios are against: the same timeline without trim."""
    return AFTER_BASELINE if peer in TRIM_PEERS else BASELINE


def timeline(peer):
    return "trim" if peer in TRIM_PEERS else "storm"


def mount_options(peer, fs_type):
    if peer == "discard":
        return "discard=sync" if fs_type == "btrfs" else "discard"
    if peer == "async":
        return "discard=async"
    return "nodiscard"


def run(bench):
    out = {"fs": {}, "baselines": {}, "trimd_idle_window": bench.p.fio_idle_window,
           "split_cgroups": bench.p.fio_split_cgroups}
    with blkio.groups() if bench.p.fio_split_cgroups else contextlib.nullcontext():
        for fs_type in bench.p.fio_fs:
            out["fs"][fs_type] = run_fs(bench, fs_type)
            for runs in out["fs"][fs_type]["jobs"].values():
                out["baselines"].update({peer: baseline_for(peer) for peer in runs})
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
            runs = {peer: [] for peer in peers_for(fs_type, job, bench.p.fio_async_jobs)}
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
    res = {"round": round_index, "timeline": timeline(peer)}
    try:
        with disk.attached() as dev:
            with disks.mounted(dev, mnt, mount_options(peer, fs_type)):
                stats0 = disk.stats()
                measure = fio_after_storm if peer in TRIM_PEERS else fio_through_storm
                res.update(measure(bench, job, peer, dev, mnt, raw))
                stats1 = disk.stats()
            res["slowtrim"] = bench.check_counters("FIO", tag, disk.stats(), stats0)
            res["discards_run"] = stats1.get("discards", 0) - stats0.get("discards", 0)
        res["alloc_end"] = disks.allocated(twin)
    finally:
        os.unlink(twin)
    return res


def storm(mnt):
    """The delete storm; returns when it started (monotonic) and how long
    rm + sync took."""
    start = time.monotonic()
    guard.run(["rm", "-r", os.path.join(mnt, "del")])
    guard.run(["sync"])
    return start, time.monotonic() - start


def fio_through_storm(bench, job, peer, dev, mnt, raw):
    """The storm timeline: fio for Params.fio_seconds, the storm after
    Params.fio_lead_s, fstrim (that peer) right after the storm's sync."""
    with contextlib.ExitStack() as stack:
        fio = Fio(stack, bench, job, dev, mnt, raw)
        time.sleep(bench.p.fio_lead_s)
        storm_at, storm_s = storm(mnt)
        if peer == "fstrim":
            fstrim = guard.spawn(blkio.inside(cgroups(bench)[1], ["fstrim", mnt]),
                                 log_path=os.path.join(raw, "fstrim.log"))
            stack.callback(guard.stop, fstrim, grace=1.0, hard_grace=600.0)
        res = fio.finish(bench.p.fio_seconds + 120)
    res.update(storm_s=storm_s, fio_start_s=fio.started - storm_at)
    return res


def fio_after_storm(bench, job, peer, dev, mnt, raw):
    """The trim timeline: the storm, then the peer (trimd started now), then
    fio as soon as the device's discard counter rises: the peer is
    discarding when fio's first I/O arrives. The baseline starts fio at once."""
    p = bench.p
    log_path = os.path.join(raw, "trimd.log")
    with contextlib.ExitStack() as stack:
        storm_at, storm_s = storm(mnt)
        before = disks.read_diskstats(dev)["discards"]
        if peer == "trimd":
            stack.enter_context(trimd.daemon(bench.trimd, bench.trimd_config("fio"),
                                             bench.state_dir("fio"), log_path,
                                             cgroups(bench)[1]))
        discarding = None
        if peer != AFTER_BASELINE:
            timeout = ASYNC_WAIT_S if peer == "async" else p.fio_idle_window_s + TRIMD_WAIT_SLACK_S
            discarding = wait_discarding(dev, before, timeout)
            if not discarding:
                say(f"FIO: {peer} sent no discard within {timeout:.0f} s of the storm; "
                    "fio starts anyway")
        wall = time.time()
        fio = Fio(stack, bench, job, dev, mnt, raw)
        res = fio.finish(p.fio_seconds + 120)
    res.update(storm_s=storm_s, fio_start_s=fio.started - storm_at,
               discarding_at_start=discarding)
    if peer == "trimd":
        res["trimd"] = trimd_at_fio(trimd.parse_log(log_path), wall)
    return res


def wait_discarding(dev, before, timeout):
    """True once `dev` has completed a discard more than `before`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if disks.read_diskstats(dev)["discards"] > before:
            return True
        time.sleep(0.02)
    return False


def trimd_at_fio(events, fio_wall):
    """What trimd was doing when fio started (wall time `fio_wall`): chunks
    begun before, whether one was in flight (begun, not yet ended, killed or
    paused), and the chunks it killed for foreground I/O after."""
    before = [e for e in events if e["t"] < fio_wall]
    chunks = [e for e in before if e["kind"] == "chunk"]
    ends = ("pass_end", "pause", "runner_killed")
    in_flight = bool(chunks) and not any(e["kind"] in ends and e["t"] >= chunks[-1]["t"]
                                         for e in before)
    killed = [e for e in events if e["kind"] == "runner_killed" and e["t"] >= fio_wall]
    return {"chunks_before_fio": len(chunks), "in_flight_at_fio": in_flight,
            "preempted": len(killed),
            "killed_after_fio_s": killed[0]["t"] - fio_wall if killed else None,
            "pass_ended_before_fio": any(e["kind"] == "pass_end" for e in before)}


class Fio:
    """One fio job running on `mnt`, with the device's discards over it."""

    def __init__(self, stack, bench, job, dev, mnt, raw):
        self.dev, self.raw = dev, raw
        self.out_path = os.path.join(raw, "fio.json")
        self.ds0 = disks.read_diskstats(dev)
        self.started = time.monotonic()
        self.proc = guard.spawn(blkio.inside(cgroups(bench)[0],
                                             fio_command(job, mnt, bench.p.fio_seconds,
                                                         self.out_path)),
                                log_path=os.path.join(raw, "fio.log"))
        stack.callback(guard.stop, self.proc, grace=5.0)

    def finish(self, timeout):
        guard.wait_until(lambda: self.proc.poll() is not None, timeout, interval=0.05,
                         what="fio")
        ds1 = disks.read_diskstats(self.dev)
        if self.proc.returncode != 0:
            raise HarnessError(f"fio exited {self.proc.returncode}; see {self.raw}/fio.log")
        with open(self.out_path) as f:
            summary_ = summary(json.load(f))
        return {"fio": summary_,
                "discards_during": disks.discards_between(self.ds0, ds1)["discards"]}


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
