"""W1, delete storm: many small files interleaved with kept ones, `rm -r`
of one set + `sync`, on ext4 and xfs over the slow-TRIM device.

Configurations, each on a fresh twin: no discard (the baseline, then
fstrim'd on a plain loop: the level "all freed space reclaimed" means),
`-o discard`, and no discard with trimd running as a daemon; on ext4 and
btrfs also "takeover": mounted with (sync) discard, then taken over by
trimd (inline_discard = "takeover" remounts it without discard) before
the delete storm; on btrfs also "async", `-o discard=async` with the
kernel's default limits. Measured:
rm + sync wall time (again on more twins for the two fast ones), the probe
over the following minute, and when the backing file's allocation is back
to the fstrim'd twin's floor (lib.context.residual_fstrim; on btrfs, a
twin fstrim'd on a mount in use), counted for trimd from when the disk
last went idle by trimd's limits.
"""
import contextlib
import os
import statistics
import time

from lib import disks, guard, latency, populate, trimd
from lib.context import drop_template, residual_fstrim
from lib.guard import say

NAME = "W1"
TITLE = "delete storm"
CONFIGS = ("nodiscard", "discard", "trimd")
TAKEOVER = "takeover"
TAKEOVER_FS = ("ext4", "btrfs")  # xfs keeps discard across a remount: not taken over
# btrfs's own background discarder, the one peer that also trims later:
# default limits (kernel 6.18: iops_limit 1000, a block group waits 120 s
# after its last change before it is discarded). In a block group still in
# use it discards only free extents of 32 KiB and more (discard_minlen in
# fs/btrfs/discard.c): the storm's 4-16 KiB holes may never come back.
ASYNC = "async"
ASYNC_FS = ("btrfs",)
ASYNC_DELAY_S = 120.0
BASELINE = "nodiscard"
RECLAIM_SLACK = 0.01  # "reclaimed": all but 1% of what the fstrim'd twin freed
# btrfs: the reference is an fstrim on a mount in use, as trimd's is: no
# FITRIM reaches what btrfs's allocation clusters hold (docs/design.md), an
# fstrim on a fresh mount does. The table still shows that gap.
IN_USE_REFERENCE_FS = ("btrfs",)
# That twin is a moving reference (528, 440, 550 MiB on one image over three
# runs): how much the first allocation after a mount hides differs from
# mount to mount. So trimd's own mount is the reference too: an fstrim on it
# right after trimd's pass shows what FITRIM could still reach there.
SAME_MOUNT_REFERENCE_FS = ("btrfs",)
REPEATED = ("nodiscard", "trimd", TAKEOVER)  # rm + sync takes seconds there: time it again
# trimd's default idle limits ([idle] in config/trimd.toml), which the
# benchmark's policy keeps: reads + writes/s, bytes/s, busy fraction.
IDLE_LIMITS = (20, 1024 * 1024, 0.05)
WITH_TRIMD = ("trimd", TAKEOVER)


def configs_for(fs_type, with_async=True):
    return (CONFIGS + ((TAKEOVER,) if fs_type in TAKEOVER_FS else ())
            + ((ASYNC,) if with_async and fs_type in ASYNC_FS else ()))


def mount_options(name, fs_type):
    """Sync discard for `-o discard` and for the filesystem trimd takes over."""
    if name == ASYNC:
        return "discard=async"
    if name not in ("discard", TAKEOVER):
        return None
    return "discard=sync" if fs_type == "btrfs" else "discard"


def run(bench):
    result = {"fs": {}}
    for fs_type in bench.p.w1_fs:
        result["fs"][fs_type] = run_fs(bench, fs_type)
    return result


def make_template(bench, fs_type):
    p = bench.p
    path = bench.image(f"w1-{fs_type}-template")
    say(f"W1 {fs_type}: making the template ({p.w1_pairs} files to delete, as many kept)")
    disks.make_image(path, p.w1_image[fs_type], fs_type)
    low, high = p.w1_sizes_kib
    with disks.plain_fs(path, bench.mnt("setup")):
        written = populate.interleaved_sets(bench.mnt("setup"), p.w1_pairs,
                                            populate.sizes_kib(low, high))
        populate.probe_file(bench.mnt("setup"))
    bench.templates[f"w1-{fs_type}"] = path
    return path, written


def run_fs(bench, fs_type):
    template, written = make_template(bench, fs_type)
    out = {"written": written, "files": bench.p.w1_pairs, "sizes_kib": bench.p.w1_sizes_kib,
           "template_alloc": disks.allocated(template), "configs": {}}
    reference = None
    try:
        for name in configs_for(fs_type, bench.p.w1_async):
            say(f"W1 {fs_type}: {name}")
            res = run_config(bench, fs_type, template, name, reference)
            out["configs"][name] = res
            if name == BASELINE:
                reference = res["residual"]
                out["reference_alloc"] = reference["after"]
                out["reference_discards"] = reference["discards"]
                out["reference_discard_bytes"] = reference["discard_bytes"]
                out["fstrim_discards"] = fstrim_discards(reference)
                out["reference_floor"] = reference["floor"]
                out["reference_in_use"] = reference["in_use_after"]
        for name, extra in rm_sync_trials(bench, fs_type, template).items():
            c = out["configs"][name]
            c["rm_sync_trials"] = [c["rm_sync_s"]] + extra
            c["rm_sync_median"] = statistics.median(c["rm_sync_trials"])
    finally:
        drop_template(bench, f"w1-{fs_type}")
    return out


def fstrim_discards(reference):
    """The discards trimd's are held to: those of an fstrim that reaches all
    the freed space, on a fresh mount of the fstrim'd twin (on btrfs, one on
    a mount in use misses what allocation clusters hold, and trimd's pass
    reached it: it sent fewer discards for less reclaim). Where one fstrim
    call left free extents for fstrim over 64 MiB ranges (xfs, see the
    report's notes), those too: trimd's chunks reach them, and must send
    each no more than once."""
    sent = reference["fresh_discards"]
    if reference["below_fstrim"] > RECLAIM_SLACK * max(reference["reclaimed"], 1):
        sent += reference["stepped_discards"]
    return sent


def reclaim_deadline(bench, name, reference):
    """How long to keep watching the allocation after the probe."""
    if name == BASELINE:
        return 0.0
    # At least a discard per deleted file: on xfs fstrim sends far fewer
    # (see lib.context.residual_fstrim), trimd's pass may send them all.
    discards = max(reference["discards"], bench.p.w1_pairs)
    one_pass = discards * (bench.p.latency_ms + 1.0) / 1e3
    if name == "discard":
        return max(30.0, 2 * one_pass)
    if name == ASYNC:  # its probe covered its wait: two more minutes to show it started
        return 120.0
    if name == TAKEOVER:  # its first pass comes a minute after the takeover at the latest
        return bench.p.idle_window_s + 3 * one_pass + 90.0
    return bench.p.idle_window_s + 3 * one_pass + 30.0


def rm_sync_trials(bench, fs_type, template):
    """More rm + sync timings on fresh twins, the configurations taking
    turns, so that a burst of other load on this machine hits both alike."""
    times = {name: [] for name in REPEATED if name in configs_for(fs_type)}
    for i in range(bench.p.w1_rm_repeats - 1):
        for name in times:
            say(f"W1 {fs_type}: {name}, rm + sync again ({i + 2} of {bench.p.w1_rm_repeats})")
            times[name].append(rm_sync_once(bench, fs_type, template, name, i + 2))
    return times


def rm_sync_once(bench, fs_type, template, name, trial):
    twin = bench.image(f"w1-{fs_type}-twin")
    disks.make_twin(template, twin)
    disk = bench.slow_disk(twin, f"w1-{fs_type}-{name}-{trial}")
    mnt = bench.mnt("w1")
    log_path = os.path.join(bench.raw("W1", f"{fs_type}-{name}"), f"trimd-{trial}.log")
    try:
        with disk.attached() as dev, disks.mounted(dev, mnt, mount_options(name, fs_type)), \
                daemon_if(bench, name, fs_type, log_path, mnt):
            start = time.monotonic()
            rm_sync(mnt)
            return time.monotonic() - start
    finally:
        os.unlink(twin)


def daemon_if(bench, name, fs_type, log_path, mnt):
    """trimd as a daemon for the trimd configurations, nothing otherwise;
    for "takeover", once it has taken the filesystem over."""
    if name not in WITH_TRIMD:
        return contextlib.nullcontext()
    if name == TAKEOVER:
        return taken_over(bench, fs_type, log_path, mnt)
    return trimd.daemon(bench.trimd, bench.trimd_config("daemon"),
                        bench.state_dir(f"w1-{fs_type}"), log_path)


def takeover_config(bench):
    """The daemon policy, the benchmark's filesystems taken over: the key
    goes to the last [[filesystem]] rule, the one naming them, so no other
    mount on this machine is ever remounted."""
    path = os.path.join(bench.work_dir, "trimd-takeover.toml")
    if not os.path.exists(path):
        with open(bench.trimd_config("daemon")) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.rstrip("\n") + '\ninline_discard = "takeover"\n')
        trimd.check_config(bench.trimd, path)
    return path


def superblock_options(mnt):
    """The superblock options of the mount at `mnt` (mountinfo's last field)."""
    with open("/proc/self/mountinfo", errors="surrogateescape") as f:  # any bytes in names
        for line in f:
            fields = line.split()
            if fields[4] == mnt:
                found = fields[-1]
    return found.split(",")


def has_sync_discard(mnt):
    return any(o in ("discard", "discard=sync") for o in superblock_options(mnt))


@contextlib.contextmanager
def taken_over(bench, fs_type, log_path, mnt):
    before = superblock_options(mnt)
    with trimd.daemon(bench.trimd, takeover_config(bench), bench.state_dir(f"w1-{fs_type}"),
                      log_path) as proc:
        guard.wait_until(lambda: not has_sync_discard(mnt), 30, what=f"trimd to take {mnt} over")
        after = superblock_options(mnt)
        say(f"W1 {fs_type}: taken over: {','.join(before)} -> {','.join(after)}")
        proc.mount_options = {"before": before, "after": after}
        yield proc


def rm_sync(mnt):
    guard.run(["rm", "-r", os.path.join(mnt, "del")])
    guard.run(["sync"])


def run_config(bench, fs_type, template, name, reference):
    twin = bench.image(f"w1-{fs_type}-twin")
    disks.make_twin(template, twin)
    raw = bench.raw("W1", f"{fs_type}-{name}")
    disk = bench.slow_disk(twin, f"w1-{fs_type}-{name}")
    mnt = bench.mnt("w1")
    res = {"alloc_start": disks.allocated(twin)}
    log_path = os.path.join(raw, "trimd.log")
    try:
        with disk.attached() as dev:
            with disks.mounted(dev, mnt, mount_options(name, fs_type)):
                stats0, ds0 = disk.stats(), disk.diskstats()
                with daemon_if(bench, name, fs_type, log_path, mnt) as proc:
                    res.update(storm_and_probe(bench, name, twin, mnt, raw, reference,
                                               log_path, dev))
                    if name == TAKEOVER:
                        res["mount_options"] = proc.mount_options
                ds_own = None
                if name in WITH_TRIMD and fs_type in SAME_MOUNT_REFERENCE_FS:
                    ds_own = disks.settled_diskstats(dev)
                    res["same_mount_fstrim"] = same_mount_fstrim(twin, mnt, dev, ds_own)
            # After the unmount: no discard is left in flight.
            stats1, ds1 = disk.stats(), disk.diskstats()
        res["slowtrim"] = bench.check_counters("W1", f"{fs_type}/{name}", stats1, stats0, ds0, ds1)
        res["sent"] = disks.discards_between(ds0, ds_own or ds1)
        if "same_mount_fstrim" in res:
            res.update(same_mount_reclaim(res, res["same_mount_fstrim"]))
        res["slowtrim_final"] = disk.final
        res["alloc_end"] = disks.allocated(twin)
        if name in WITH_TRIMD:
            res["trimd_events"] = trimd.parse_log(log_path)
            res["trimd_pass"] = trimd.pass_summary(res["trimd_events"], mnt)
            res["disk_quiet_at"] = quiet_from(res, res["trimd_pass"].get("first_chunk_t"))
        res.pop("io_samples", None)
        res["residual"] = residual_fstrim(
            bench, twin, f"{fs_type}/{name}",
            in_use=name == BASELINE and fs_type in IN_USE_REFERENCE_FS)
    finally:
        os.unlink(twin)
    return res


def same_mount_fstrim(twin, mnt, dev, ds_before):
    """An fstrim on the mount trimd just trimmed (trimd has exited, nothing
    in flight): what it still reclaims, FITRIM could have reached."""
    before = disks.allocated(twin)
    seconds, _ = disks.fstrim(mnt)
    sent = disks.discards_between(ds_before, disks.settled_diskstats(dev))
    return {"before": before, "after": disks.allocated(twin), "seconds": seconds,
            "discards": sent["discards"], "bytes": sent["bytes"]}


def same_mount_reclaim(res, same):
    """The reclaim time against trimd's own mount: when the allocation first
    came within 1% of what was freed of the level that mount's fstrim
    reached. The in-use twin's verdict stays beside it."""
    freed = max(0, res["alloc_start"] - same["after"])
    level = same["after"] + max(RECLAIM_SLACK * freed, disks.MiB)
    reclaimed_at = disks.first_at_or_below(res["alloc_samples"], level)
    return {"reclaim_level_in_use": res["reclaim_level"],
            "reclaimed_at_in_use": res["reclaimed_at"], "reclaim_s_in_use": res["reclaim_s"],
            "reclaim_level": level, "reclaimed_at": reclaimed_at,
            "reclaim_s": reclaimed_at - res["t0"] if reclaimed_at else None}


def reclaim_level(reference, alloc_before):
    """Back to the fstrim'd twin's allocation, but for 1% of what it freed.
    Its floor, that is: on xfs the twin's plain fstrim leaves most freed
    extents alone, fstrim over small ranges then reaches them. On btrfs,
    what an fstrim on a mount in use reaches."""
    level = min(reference["after"], reference["floor"])
    if reference.get("in_use_after") is not None:
        level = reference["in_use_after"]
    freed = max(0, alloc_before - level)
    return level + max(RECLAIM_SLACK * freed, disks.MiB)


def reclaim_over(name, alloc, level, log_path):
    """trimd: its pass has ended (one pass is what the target allows);
    online discard: the allocation is back to the level."""
    if name in WITH_TRIMD:
        return any(e["kind"] == "pass_end" for e in trimd.parse_log(log_path))
    return alloc.samples[-1][1] <= level


def quiet_from(res, first_chunk_t):
    """When the disk went idle for good after the probe, by trimd's limits:
    the filesystem may still write after the load stops (btrfs commits
    every 30 s), and trimd's idle window starts only then."""
    if first_chunk_t is None:
        return None
    busy = disks.last_busy(res["io_samples"], first_chunk_t, *IDLE_LIMITS)
    return max(res["probe_end"], busy or 0.0)


def probe_seconds(bench, name):
    """discard=async starts discarding only after its delay: its probe runs
    on into that, so that the writes meet its discards as trimd's meet its pass."""
    return bench.p.probe_seconds + (ASYNC_DELAY_S if name == ASYNC else 0.0)


def storm_and_probe(bench, name, twin, mnt, raw, reference, log_path, dev):
    """rm -r + sync, the probe over the next minute, then (unless this is
    the baseline) watch the allocation until it is back to the reference."""
    level = reclaim_level(reference, disks.allocated(twin)) if reference else None
    with disks.AllocationSampler(twin, dev=dev) as alloc:
        t0 = time.time()
        rm_sync(mnt)
        t_sync = time.time()
        probe = latency.Probe(os.path.join(mnt, populate.PROBE_FILE), probe_seconds(bench, name),
                              os.path.join(raw, "probe.csv"))
        with latency.running(probe):
            probe.wait()
        deadline = time.time() + reclaim_deadline(bench, name, reference)
        while level is not None and time.time() < deadline:
            if reclaim_over(name, alloc, level, log_path):
                break
            time.sleep(0.2)
    reclaimed_at = alloc.first_at_or_below(level) if level is not None else None
    return {"t0": t0, "rm_sync_s": t_sync - t0, "probe_start": probe.started_at,
            "probe_end": probe.ended_at, "probe": latency.summary(probe.samples),
            "probe_samples": probe.samples, "alloc_samples": alloc.samples,
            "reclaim_level": level, "reclaimed_at": reclaimed_at,
            "reclaim_s": reclaimed_at - t0 if reclaimed_at else None,
            "io_samples": alloc.io_samples}
