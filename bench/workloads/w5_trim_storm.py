"""W5, trim storm: many hosts whose filesystems all live on one slow-TRIM
backend, and a tenant on the same backend whose foreground probe runs
throughout.

One slowtrim device; its disk carries a GPT with one ext4 partition per
host and the tenant's partition (lib/shared_backend.py), so every host's
discards queue on the same device. Every configuration runs on a fresh
`cp --sparse=always` twin of one template in which each host has written
and deleted the same files. Configurations: no trim (the baseline); every
host's fstrim at once (the storm); fstrim at random delays over
Params.w5_spread_s; one trimd per host without a cap; with [fleet]
max_concurrent 1 and 2 through a single local etcd; with one slot and a
[fleet] duty budget (Params.w5_fleet_duties); and with a [trim] duty on every
host and no cap (Params.w5_host_duty: the fleet gets hosts x that). The probe
runs for the same time in every configuration; the hosts start
Params.w5_lead_s into it. A configuration with a budget runs on after the
probe until every host's pass has ended, which takes about the backend's
device time over the budget.
"""
import contextlib
import os
import time

from lib import disks, etcd, latency, populate, shared_backend
from lib.backend_sampler import BackendSampler, max_overlap
from lib.context import require_tools
from lib.guard import HarnessError, say
from lib.host_trims import BACKEND, Fstrims, Trimds, chunk_intervals, slot_intervals

NAME = "W5"
TITLE = "trim storm"
BASELINE = "notrim"
STORM = "storm"
SPREAD = "spread"
FIXED = (BASELINE, STORM, SPREAD, "trimd-nocap", "trimd-cap1", "trimd-cap2")  # baseline first
HOST_DUTY = "trimd-host-duty"
RECLAIM_SLACK = 0.01  # reclaimed: down to the storm's allocation, but for 1% of what it freed
# or this, what the filesystems' own journal writes may allocate meanwhile (the template is
# small: 6 MiB freed in all at full size)
RECLAIM_FLOOR = 256 * 1024
PREFIX = f"/trimd/v1/{BACKEND}/"


def fleet_duty_name(duty):
    return f"trimd-cap1-duty{duty}"


def configs(p):
    """Every configuration's name, no trim first, and {name: (max_concurrent,
    [fleet] duty, [trim] duty)} for trimd's."""
    trimds = {"trimd-nocap": (None, None, None), "trimd-cap1": (1, None, None),
              "trimd-cap2": (2, None, None)}
    for duty in p.w5_fleet_duties:
        trimds[fleet_duty_name(duty)] = (1, duty, None)
    if p.w5_host_duty:
        trimds[HOST_DUTY] = (None, None, p.w5_host_duty)
    names = FIXED + tuple(n for n in trimds if n not in FIXED)
    return names, trimds


def duty_of(p, trimd_config):
    """The whole fleet's budget, a fraction: [fleet] duty, or hosts x [trim]
    duty; None without a budget."""
    _, fleet, host = trimd_config
    if fleet:
        return parse_percent(fleet)
    if host:
        return parse_percent(host) * p.w5_hosts
    return None


def parse_percent(text):
    return float(text.rstrip("%")) / 100


def deadline_s(p, trimd_config, device_s):
    """How long the hosts get: a budget stretches their passes to about the
    device time over it. A host paced by its own [trim] duty, beside the
    others on the backend, is charged their discards too (its own waited
    behind them in the backend's queue), so its share, not the fleet's, sets
    how long it may take."""
    duty = None
    if trimd_config:
        duty = parse_percent(trimd_config[2]) if trimd_config[2] else duty_of(p, trimd_config)
    if not duty or not device_s:
        return p.w5_deadline_s
    return max(p.w5_deadline_s, 2.0 * device_s / duty + 30.0)


def run(bench):
    require_tools(["sfdisk", "partx", etcd.ETCD])
    template = bench.image("w5-template")
    names, trimds = configs(bench.p)
    try:
        notes = shared_backend.make_template(bench, template)
        out = {"hosts": bench.p.w5_hosts, "host_part": bench.p.w5_host_part,
               "freed": notes["freed"], "spread_s": bench.p.w5_spread_s,
               "probe_s": bench.p.w5_probe_s, "lead_s": bench.p.w5_lead_s,
               "duties": {n: duty_of(bench.p, c) for n, c in trimds.items()},
               "configs": {}, "p99_rounds": {name: [] for name in names},
               "waited_rounds": {name: [] for name in names},
               "early_s": bench.p.w5_early_s, "early_p99_rounds": {name: [] for name in names}}
        level = device_s = None
        for i in range(bench.p.w5_rounds):
            for name in names:
                say(f"W5: {name}, round {i + 1} of {bench.p.w5_rounds}")
                res = run_config(bench, template, name, i, trimds.get(name),
                                 deadline_s(bench.p, trimds.get(name), device_s))
                if name == STORM and level is None:
                    level = reclaim_level(res)
                    out["reclaim_level"] = level
                    device_s = res["slowtrim"]["discard_ns"] / 1e9
                out["p99_rounds"][name].append(res["probe"]["write"]["p99"])
                out["early_p99_rounds"][name].append(early_p99(res, bench.p))
                out["waited_rounds"][name].append(
                    latency.waited_share(res["probe_samples"], bench.p.latency_ms))
                if i == 0:
                    out["configs"][name] = res
        for res in out["configs"].values():
            summarize_reclaim(res, level)
        check(bench, out)
        return out
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(template)


def early_p99(res, p):
    """The tenant's write p99 over the first w5_early_s after the hosts
    start (in no trim, after the same lead): a storm of a few seconds is
    under 1% of a whole probe's writes, and would not show in its p99."""
    start = res.get("trim_started_at") or res["probe_start"] + p.w5_lead_s
    return latency.summary(res["probe_samples"], start, start + p.w5_early_s)["write"]["p99"]


def reclaim_level(storm):
    """Every host reclaimed: the backing file down to where the storm
    (every host's fstrim, run to its end) left it, but for 1%."""
    freed = max(0, storm["alloc_start"] - storm["alloc_end"])
    return storm["alloc_end"] + max(RECLAIM_SLACK * freed, RECLAIM_FLOOR)


def summarize_reclaim(res, level):
    if not res.get("trim_started_at") or level is None:
        return
    at = first_at_or_below(res["backend_samples"], level, res["trim_started_at"])
    res["reclaimed_s"] = None if at is None else at - res["trim_started_at"]


def first_at_or_below(samples, level, since):
    for s in samples:
        if s["t"] >= since and s["alloc"] <= level:
            return s["t"]
    return None


def hosts_for(bench, name, mounts, raw, etcd_url, trimd_config):
    if name == STORM:
        return Fstrims(mounts, [0.0] * len(mounts), raw)
    if name == SPREAD:
        return Fstrims.spread(mounts, bench.p.w5_spread_s, raw)
    if trimd_config:
        cap, fleet_duty, host_duty = trimd_config
        return Trimds(bench, mounts, raw, etcd_url, cap, fleet_duty, host_duty)
    return None


def run_config(bench, template, name, round_index, trimd_config, deadline):
    twin = bench.image("w5-twin")
    disks.make_twin(template, twin)
    raw = bench.raw("W5", name if round_index == 0 else f"{name}.round{round_index + 1}")
    disk = bench.slow_disk(twin, f"w5-{name}")
    mounts = shared_backend.host_mounts(bench, bench.p.w5_hosts)
    tenant = bench.mnt("w5-tenant")
    res = {"alloc_start": disks.allocated(twin)}
    try:
        with disk.attached(partscan=True) as dev, shared_backend.no_writeback_throttling(dev) as wbt:
            res["wbt_lat_usec_before"] = wbt
            with shared_backend.mounted_all(dev, mounts, tenant) as parts:
                stats0 = disk.stats()
                res.update(probe_and_trim(bench, name, twin, dev, parts, disk.stats_path,
                                          mounts, tenant, raw, trimd_config, deadline))
            stats1 = disk.stats()
        res["slowtrim"] = bench.check_counters("W5", name, stats1, stats0)
        res["alloc_end"] = disks.allocated(twin)
    finally:
        os.unlink(twin)
    return res


def probe_and_trim(bench, name, twin, dev, parts, stats_path, mounts, tenant, raw, trimd_config,
                   deadline):
    p = bench.p
    probe = latency.Probe(os.path.join(tenant, populate.PROBE_FILE), p.w5_probe_s,
                          os.path.join(raw, "probe.csv"))
    res, done_at = {}, {}
    cap = trimd_config[0] if trimd_config else None
    with contextlib.ExitStack() as stack:
        etcd_url = None
        if cap:  # started before the probe: its start-up is not the hosts'
            etcd_url = stack.enter_context(etcd.member(bench.scratch("w5-etcd", name),
                                                       os.path.join(raw, "etcd.log")))
        sampler = stack.enter_context(BackendSampler(
            twin, os.path.basename(dev), [os.path.basename(x) for x in parts[:-1]], stats_path,
            etcd_url=etcd_url, etcd_prefix=PREFIX))
        hosts = hosts_for(bench, name, mounts, raw, etcd_url, trimd_config)
        with latency.running(probe):
            time.sleep(p.w5_lead_s)
            if hosts:
                res["trim_started_at"] = time.time()
                stack.callback(hosts.stop)
                hosts.start(res["trim_started_at"])
            while probe.proc.poll() is None:
                if hosts:
                    hosts.poll(time.time(), done_at)
                time.sleep(0.05)
            probe.wait()
        if hosts:
            wait_hosts(hosts, done_at, res["trim_started_at"] + deadline, len(mounts))
            hosts.stop()
            res["events"] = hosts.events()
    res.update({"probe_start": probe.started_at, "probe_end": probe.ended_at,
                "probe": latency.summary(probe.samples), "probe_samples": probe.samples,
                "backend_samples": sampler.samples, "slowtrim_snapshots": sampler.slowtrim,
                "etcd_keys": sampler.etcd_keys, "done_at": done_at})
    if hosts:
        res["host_started_at"] = {i: hosts.started_at(i) for i in range(len(mounts))}
        res.update(concurrency(res, sampler, cap))
    return res


def wait_hosts(hosts, done_at, deadline, count):
    """After the probe: until every host's pass has ended, or the deadline."""
    while len(done_at) < count and time.time() < deadline:
        hosts.poll(time.time(), done_at)
        time.sleep(0.2)
    if len(done_at) < count:
        say(f"W5: {count - len(done_at)} host(s) not done by the deadline")


def concurrency(res, sampler, cap):
    """How many hosts trimmed at once: sampled from the partitions'
    discards in flight, and for trimd from the slots and chunks it logged."""
    out = {"max_hosts_discarding": max((s["hosts_discarding"] for s in sampler.samples), default=0)}
    events = res.get("events") or {}
    if events:
        until = time.time()
        out["max_chunks_at_once"] = max_overlap(chunk_intervals(events, until))
        slots = slot_intervals(events, until)
        out["slot_intervals"] = slots
        out["max_slots_at_once"] = max_overlap(slots) if slots else None
    if cap:
        out["max_concurrent"] = cap
    return out


def check(bench, out):
    """The harness's own checks: fstrim always ends (whether trimd's passes
    end in time is a result, in the report, not a check)."""
    for name in (STORM, SPREAD):
        res = out["configs"].get(name)
        done = len(res.get("done_at", {})) if res else 0
        bench.check("W5", f"{name}: every host's fstrim ended", done == out["hosts"],
                    f"{done} of {out['hosts']}")
    if not out["configs"]:
        raise HarnessError("W5 ran no configuration")
