"""W6, the fleet at scale: a thousand simulated hosts on one backend with
max_concurrent = 4, each the real coordinator (bench/fleet_sim: its own lease,
claim and watch) against a real three-member etcd cluster on loopback. Hosts
arrive over a spread, hold their slot for a random time and give it back;
5% crash while holding (their lease expires). Once, mid-run, the etcd leader
is stopped (SIGSTOP) for a while and resumed. What it measures: hosts
believing they hold a slot at once (their own view, and against etcd's
claims sampled every 100 ms), grants out of arrival order, hand-over after a
release and after a crash, etcd requests per waiting host, etcd's CPU and
memory, and the simulator's memory per host (docs/fleet.md, "At scale").
"""
import json
import os
import threading
import time

from lib import etcd, guard
from lib.guard import HarnessError, say

NAME = "W6"
TITLE = "the fleet at scale"


def _cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _hwm_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return None


def _stop_leader_once(members, after_s, for_s, stopped, finished):
    """Stops the leader (SIGSTOP) `after_s` into the run for `for_s`, unless
    the run ends first; notes which member and when in `stopped`."""
    if finished.wait(after_s):
        return
    urls = [url for url, _ in members]
    index = etcd.leader(urls)
    if index is None:
        stopped["error"] = "no leader to stop"
        return
    proc = members[index][1]
    stopped.update({"member": index + 1, "at_s": after_s})
    os.kill(proc.pid, 19)  # SIGSTOP
    try:
        finished.wait(for_s)
    finally:
        os.kill(proc.pid, 18)  # SIGCONT
    stopped["for_s"] = for_s


def run(bench):
    p = bench.p
    guard.require(os.path.exists(bench.fleet_sim), f"no {bench.fleet_sim} (build the fleet_sim target)")
    say(f"W6: {p.w6_hosts} simulated hosts, max_concurrent {p.w6_max_concurrent}, lease TTL "
        f"{p.w6_ttl_s:g} s, {p.w6_crash:.0%} crashing, the leader stopped {p.w6_leader_stop_s:g} s")
    work = bench.scratch("w6-etcd")
    stopped = {}
    finished = threading.Event()
    with etcd.cluster(work, bench.raw()) as members:
        cpu_before = [_cpu_seconds(proc.pid) for _, proc in members]
        stopper = threading.Thread(target=_stop_leader_once, daemon=True,
                                   args=(members, p.w6_leader_stop_after_s, p.w6_leader_stop_s,
                                         stopped, finished))
        started = time.monotonic()
        stopper.start()
        try:
            out = guard.run([bench.fleet_sim, "--etcd", ",".join(url for url, _ in members),
                             "--hosts", str(p.w6_hosts), "--max-concurrent", str(p.w6_max_concurrent),
                             "--ttl", f"{p.w6_ttl_s}s", "--arrive-over", f"{p.w6_arrive_over_s}s",
                             "--hold-min", f"{p.w6_hold_min_s}s", "--hold-max", f"{p.w6_hold_max_s}s",
                             "--crash", str(p.w6_crash), "--give-up", f"{p.w6_give_up_s}s"],
                            timeout=p.w6_give_up_s + 120)
        finally:
            finished.set()
            stopper.join()
        wall_s = time.monotonic() - started
        etcd_cpu = [_cpu_seconds(proc.pid) - before for (_, proc), before in zip(members, cpu_before)]
        etcd_hwm = [_hwm_kib(proc.pid) for _, proc in members]
    try:
        report = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError) as e:
        raise HarnessError(f"fleet_sim printed no report: {out[-400:]!r}") from e
    report.update({"wall_s": wall_s, "leader_stop": stopped, "etcd_cpu_s": etcd_cpu,
                   "etcd_hwm_kib": etcd_hwm})
    hosts = report.get("hosts", 0)
    bench.check(NAME, "every host granted, then released or crashed",
                report.get("released", 0) + report.get("crashed", 0) == hosts,
                f"{report.get('released')} released, {report.get('crashed')} crashed of {hosts}")
    bench.check(NAME, "etcd sampled through the run", report.get("samples", 0) > 0,
                f"{report.get('samples')} samples, {report.get('failed_samples')} failed")
    bench.check(NAME, "the leader was stopped once", "member" in stopped, str(stopped))
    return report
