"""W2, trim under load: a steady foreground probe on ext4 over the
slow-TRIM device while over 1 GiB of fragmented free space waits to be
trimmed.

Configurations, each on a fresh twin: no trim (the baseline); fstrim
started a few seconds into the load; trimd (daemon) started at the same
moment, then left to reclaim once the load stops; and trimd whose pass has
already begun when the load arrives (trimd kills the chunk in flight), with
trimd's chunk size and with small chunks (Params.small_chunk: what a
smaller chunk_size would buy). fstrim runs once (the reference of what a
pass reclaims); the others run in rounds, baseline first in each (ABAB...,
Params.w2_repeats rounds), so that each trimd run has a no-trim run beside
it and the report gives the median of those paired ratios with an interval
(lib/ratios.py) instead of one ratio at the mercy of this machine's noise.
"""
import contextlib
import os
import time

from lib import disks, guard, latency, populate, trimd

from . import w2_reaction
from lib.context import residual_fstrim
from lib.guard import HarnessError, say

NAME = "W2"
TITLE = "trim under load"
REFERENCE = "fstrim"
ROUND = ("notrim", "trimd", "trimd-midpass", "trimd-midpass-small")  # the baseline first
BASELINE = "notrim"
RECLAIM_SLACK = 0.01


def shared_template(bench, fs_type):
    """Interleaved files with one set deleted, never trimmed: fragmented
    free space that is still allocated in the backing file. W3 uses it too."""
    key = f"w2-{fs_type}"
    if key not in bench.templates:
        p = bench.p
        path = bench.image(key + "-template")
        say(f"W2/W3 {fs_type}: making the template ({p.w2_pairs} x "
            f"{p.w2_file_bytes // 1024} KiB freed between as many kept)")
        disks.make_image(path, p.w2_image, fs_type)
        setup = bench.mnt("setup")
        with disks.plain_fs(path, setup):
            written = populate.interleaved_sets(setup, p.w2_pairs, [p.w2_file_bytes])
            populate.probe_file(setup)
            guard.run(["rm", "-r", os.path.join(setup, "del")])
            guard.run(["sync"])
        bench.templates[key] = path
        bench.template_notes[key] = written
    return bench.templates[key], bench.template_notes[key]


def run(bench):
    template, written = shared_template(bench, "ext4")
    out = {"fs": "ext4", "freed": written["del"], "configs": {}}
    say(f"W2: {REFERENCE}")
    reference = run_config(bench, template, REFERENCE, None)
    out["configs"][REFERENCE] = reference
    out["reference_alloc"] = reference["alloc_end"]
    out["p99_rounds"] = {name: [] for name in ROUND}
    rounds = bench.p.w2_repeats
    for i in range(rounds):
        for name in ROUND:
            say(f"W2: {name}, round {i + 1} of {rounds}")
            res = run_config(bench, template, name, reference, i)
            out["p99_rounds"][name].append(res["probe"]["write"]["p99"])
            if i == 0:  # the tables and charts show the first round whole
                out["configs"][name] = res
    say("W2: reaction time")
    try:
        out["reaction"] = w2_reaction.run(bench, template, bench.p.w2_reactions)
    except HarnessError as e:  # the configurations above stand on their own
        say(f"W2 reaction failed: {e}")
        out["reaction"] = {"error": str(e), "samples_ms": []}
    return out


def run_config(bench, template, name, reference, round_index=0):
    twin = bench.image("w2-twin")
    disks.make_twin(template, twin)
    raw = bench.raw("W2", name if round_index == 0 else f"{name}.round{round_index + 1}")
    disk = bench.slow_disk(twin, f"w2-{name}")
    mnt = bench.mnt("w2")
    res = {"alloc_start": disks.allocated(twin)}
    log_path = os.path.join(raw, "trimd.log")
    try:
        with disk.attached() as dev:
            with disks.mounted(dev, mnt):
                stats0, ds0 = disk.stats(), disk.diskstats()
                res.update(load_and_trim(bench, name, twin, mnt, raw, log_path, reference))
            stats1, ds1 = disk.stats(), disk.diskstats()  # unmounted: nothing in flight
        res["slowtrim"] = bench.check_counters("W2", name, stats1, stats0, ds0, ds1)
        res["alloc_end"] = disks.allocated(twin)
        reported = None
        if name.startswith("trimd"):
            res["trimd_events"] = trimd.parse_log(log_path)
            res["trimd_pass"] = trimd.pass_summary(res["trimd_events"], mnt)
            reported = trimd.reported_bytes(res["trimd_events"], mnt)
            # Killed calls report nothing, but what they sent is in their record.
            res["preemptions"] = trimd.preemptions(log_path)
            redone = sum(p.get("discarded", 0) for p in res["preemptions"])
            res["redone_bytes"] = redone
            reported = None if reported is None else reported + redone
        elif name == "fstrim":
            with open(os.path.join(raw, "fstrim.log")) as f:
                reported = disks.fstrim_bytes(f.read())
        if reported is not None:
            bench.check_own_discards("W2", name, "ext4", res["slowtrim"]["bytes_discarded"],
                                     reported)
        res["residual"] = residual_fstrim(bench, twin, f"W2/{name}")
    finally:
        os.unlink(twin)
    return res


def start_daemon(bench, stack, name, log_path):
    config = bench.trimd_config("daemon", small_chunks=name.endswith("-small"))
    return stack.enter_context(trimd.daemon(bench.trimd, config, bench.state_dir("w2"),
                                            log_path))


def first_chunk_started(log_path):
    return any(e["kind"] == "chunk" for e in trimd.parse_log(log_path))


def load_and_trim(bench, name, twin, mnt, raw, log_path, reference):
    p = bench.p
    res = {}
    probe = latency.Probe(os.path.join(mnt, populate.PROBE_FILE), p.w2_load_s,
                          os.path.join(raw, "probe.csv"))
    with contextlib.ExitStack() as stack, disks.AllocationSampler(twin) as alloc:
        if name.startswith("trimd-midpass"):
            start_daemon(bench, stack, name, log_path)
            guard.wait_until(lambda: first_chunk_started(log_path), p.idle_window_s + 60,
                             interval=0.02, what="trimd's first chunk")
        fstrim = None
        with latency.running(probe):
            if name in ("fstrim", "trimd"):
                time.sleep(p.w2_lead_s)
                res["trim_started_at"] = time.time()
                if name == "fstrim":
                    fstrim = guard.spawn(["fstrim", "-v", mnt], log_path=os.path.join(raw, "fstrim.log"))
                    stack.callback(guard.stop, fstrim, grace=1.0, hard_grace=600.0)
                else:
                    start_daemon(bench, stack, name, log_path)
            res["fstrim_ended_at"] = wait_probe(probe, fstrim)
        if fstrim is not None:
            res["fstrim_ended_at"] = res["fstrim_ended_at"] or wait_exit(fstrim, 600)
            res["fstrim_s"] = res["fstrim_ended_at"] - res["trim_started_at"]
            if fstrim.returncode != 0:
                raise HarnessError(f"fstrim failed ({fstrim.returncode}); see {raw}/fstrim.log")
        if name.startswith("trimd"):
            res.update(wait_reclaim(bench, alloc, probe.ended_at, reference, log_path))
    res.update({"probe_start": probe.started_at, "probe_end": probe.ended_at,
                "probe": latency.summary(probe.samples), "probe_samples": probe.samples,
                "alloc_samples": alloc.samples})
    if fstrim is not None:
        res["probe_during_trim"] = latency.summary(probe.samples, res["trim_started_at"],
                                                   res["fstrim_ended_at"])
    return res


def wait_probe(probe, fstrim):
    """Waits for the probe; notes when fstrim (if any) ended meanwhile."""
    ended = None
    while probe.proc.poll() is None:
        if fstrim is not None and ended is None and fstrim.poll() is not None:
            ended = time.time()
        time.sleep(0.02)
    probe.wait()
    return ended


def wait_exit(proc, timeout):
    guard.wait_until(lambda: proc.poll() is not None, timeout, interval=0.02, what="fstrim")
    return time.time()


def wait_reclaim(bench, alloc, load_end, reference, log_path):
    """After the load: until trimd's pass ends. Reclaimed: back to fstrim's
    allocation, but for 1% of what fstrim freed."""
    freed = max(0, reference["alloc_start"] - reference["alloc_end"])
    level = reference["alloc_end"] + max(RECLAIM_SLACK * freed, disks.MiB)
    deadline = time.time() + bench.p.idle_window_s + 3 * reference["fstrim_s"] + 30
    while time.time() < deadline and not trimd.pass_ended(log_path):
        time.sleep(0.2)
    reclaimed_at = alloc.first_at_or_below(level)
    return {"reclaim_level": level, "reclaimed_at": reclaimed_at,
            "reclaim_after_load_s": max(0.0, reclaimed_at - load_end) if reclaimed_at else None}
