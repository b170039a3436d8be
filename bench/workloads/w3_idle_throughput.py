"""W3, idle throughput: on an idle slow-TRIM device holding W2's fragmented
free space, one full pass of `trimd --once` against `fstrim` on twins: the
time each takes, the allocation each reclaims and what slowtrim counted;
then more rounds of the two alone, for the pass-time ratio.
"""
import os

from lib import disks, trimd
from lib.context import residual_fstrim
from lib.disks import GiB, MiB
from lib.guard import run_measured, say
from workloads.w2_trim_under_load import shared_template

NAME = "W3"
TITLE = "idle throughput"
# fstrim-stepped: fstrim over 64 MiB ranges, all the work there is (see
# disks.fstrim_stepped); -small: chunk_size = Params.small_chunk.
CONFIGS = ("fstrim", "fstrim-stepped", "trimd", "trimd-small")
BASELINE = "fstrim"
# A second pass right after the first, on the same mount: ext4 remembers
# which block groups were trimmed whole (until something is freed there)
# and skips them; a pass that split or gave up on a group mid-way has lost
# that. Counted from the loop device's diskstats.
SECOND_PASS = ("fstrim", "trimd")
# The pass-time ratio from paired rounds: one pass of the same work varies
# run to run here (fstrim on btrfs took 19.9 s in one full run, 22.7 and
# 22.3 s in others), so a single pair can miss or meet by chance. Round 1 is
# every configuration above; rounds 2.. (Params.w3_rounds) trimd and the
# fstrim that does its work (time_baseline), back to back on fresh twins.
# "Left free extents": more than this share of what one fstrim reclaimed.
ALLOC_TOLERANCE = 0.01
# Nothing writes during an idle pass: slowtrim's bytes_unmapped must equal
# the backing file's drop, up to what the filesystem's own metadata moves.
UNMAPPED_SLACK = 1 * MiB


def run(bench):
    out = {"fs": {}}
    for fs_type in bench.p.w3_fs:
        template, written = shared_template(bench, fs_type)
        runs = {}
        for name in CONFIGS:
            say(f"W3 {fs_type}: {name}")
            runs[name] = run_config(bench, fs_type, template, name)
        baseline = time_baseline(runs)
        rounds = [pass_times(runs, baseline)]
        for n in range(2, bench.p.w3_rounds + 1):
            say(f"W3 {fs_type}: round {n} of {bench.p.w3_rounds} ({baseline}, trimd)")
            rounds.append(pass_times({name: run_config(bench, fs_type, template, name, n)
                                      for name in (baseline, "trimd")}, baseline))
        out["fs"][fs_type] = {"freed": written["del"], "configs": runs, "rounds": rounds,
                              "time_baseline": baseline}
    return out


def fstrim_left_extents(configs):
    """One whole-filesystem fstrim left free extents that fstrim over 64 MiB
    ranges reached (xfs: a FITRIM over whole AGs skips small extents, see
    residual_fstrim); trimd's chunks reach them too."""
    f = configs["fstrim"]
    reclaimed = f["alloc_start"] - f["alloc_end"]
    return (f.get("residual") or {}).get("below_fstrim", 0) > ALLOC_TOLERANCE * max(reclaimed, 1)


def time_baseline(configs):
    """The fstrim trimd's pass time is held to: the one doing the same work."""
    if fstrim_left_extents(configs) and "fstrim-stepped" in configs:
        return "fstrim-stepped"
    return "fstrim"


def pass_seconds(name, res):
    """fstrim's wall time; trimd's from its first chunk to the pass's end
    (its wall time adds start-up and the idle window)."""
    if name.startswith("trimd"):
        return (res.get("trimd_pass") or {}).get("active_s")
    return res["run"]["wall_s"]


def pass_times(runs, baseline):
    """{"baseline": s, "trimd": s}"""
    return {"baseline": pass_seconds(baseline, runs[baseline]),
            "trimd": pass_seconds("trimd", runs["trimd"])}


def run_config(bench, fs_type, template, name, round_no=1):
    """One pass on a fresh twin; round 1 adds the second pass and the
    stepped fstrim of what is left."""
    twin = bench.image(f"w3-{fs_type}-twin")
    disks.make_twin(template, twin)
    raw = bench.raw("W3", f"{fs_type}-{name}" + (f"-round{round_no}" if round_no > 1 else ""))
    disk = bench.slow_disk(twin, f"w3-{fs_type}-{name}")
    mnt = bench.mnt("w3")
    log_path = os.path.join(raw, f"{name}.log")
    res = {}
    try:
        with disk.attached() as dev:
            with disks.mounted(dev, mnt):
                stats0, ds0 = disk.stats(), disk.diskstats()
                res["alloc_start"] = disks.allocated(twin)
                res["run"] = trim_once(bench, name, mnt, log_path, fs_type,
                                       os.path.getsize(twin))
                ds_first = disks.settled_diskstats(dev)
                res["sent"] = disks.discards_between(ds0, ds_first)
                if name in SECOND_PASS and round_no == 1:
                    res["second"] = second_pass(bench, name, mnt, raw, fs_type, twin, dev,
                                                ds_first)
            res["alloc_end"] = disks.allocated(twin)
            stats1, ds1 = disk.stats(), disk.diskstats()  # unmounted: nothing in flight
        tag = f"{fs_type}/{name}" + (f" (round {round_no})" if round_no > 1 else "")
        res["slowtrim"] = counters = bench.check_counters("W3", tag, stats1, stats0, ds0, ds1)
        dropped = res["alloc_start"] - res["alloc_end"]
        bench.check("W3", f"{tag}: bytes_unmapped = the backing file's drop",
                    abs(counters["bytes_unmapped"] - dropped) <= UNMAPPED_SLACK,
                    f"{counters['bytes_unmapped']} vs {dropped}")
        bench.check("W3", f"{tag}: the pass discarded something", counters["discards"] > 0,
                    f"discards={counters['discards']}")
        if name.startswith("trimd"):
            res["trimd_events"] = trimd.parse_log(log_path)
            res["trimd_pass"] = trimd.pass_summary(res["trimd_events"], mnt)
            bench.check("W3", f"{tag}: trimd's pass succeeded",
                        res["run"]["exit"] == 0 and res["trimd_pass"]["result"] == "success",
                        f"exit {res['run']['exit']}, result {res['trimd_pass']['result']}")
            gib = counters["bytes_discarded"] / GiB
            res["cpu_s_per_gib"] = res["run"]["cpu_s"] / gib if gib else None
            reported = trimd.reported_bytes(res["trimd_events"], mnt)
        else:
            with open(log_path) as f:
                reported = disks.fstrim_bytes(f.read()) if name == "fstrim" else None
        bench.check_own_discards("W3", tag, fs_type, counters["bytes_discarded"], reported)
        if round_no == 1:
            res["residual"] = residual_fstrim(bench, twin, f"W3/{tag}")
    finally:
        os.unlink(twin)
    return res


def second_pass(bench, name, mnt, raw, fs_type, twin, dev, before):
    """The same trim again on the same mount; what it sent, and whether it
    (trimd) finished."""
    log_path = os.path.join(raw, f"{name}-second.log")
    run_result = trim_once(bench, name, mnt, log_path, fs_type, os.path.getsize(twin))
    out = disks.discards_between(before, disks.settled_diskstats(dev))
    out["wall_s"] = run_result["wall_s"]
    if name.startswith("trimd"):
        summary = trimd.pass_summary(trimd.parse_log(log_path), mnt)
        bench.check("W3", f"{fs_type}/{name}: trimd's second pass succeeded",
                    run_result["exit"] == 0 and summary["result"] == "success",
                    f"exit {run_result['exit']}, result {summary['result']}")
    return out


def trim_once(bench, name, mnt, log_path, fs_type, size):
    timeout = 1800
    if name == "fstrim":
        return run_measured(["fstrim", "-v", mnt], log_path, timeout)
    if name == "fstrim-stepped":
        return run_measured(disks.fstrim_stepped_command(mnt, size), log_path, timeout)
    config = bench.trimd_config("once", small_chunks=name.endswith("-small"))
    return trimd.run_once(bench.trimd, config,
                          bench.state_dir(f"w3-{fs_type}"), log_path, [mnt], timeout)
