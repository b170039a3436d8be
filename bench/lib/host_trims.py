"""The hosts of W5 trimming their filesystems: fstrim runs (all at once or
at random delays) or one trimd per host, each with its own state dir, no
bus and a policy limited to its one mount. Each kind starts at `start()`
and says when each host's pass ended (`done_at`)."""
import os
import random

from . import trimd
from .guard import HarnessError, spawn, stop, wait_until

# Hosts in a VM fleet cannot see the backend's load: their disks never look
# busy to them, so the comparison is about the cap, not trimd's idleness.
# preempt_interval 0: no foreground I/O of the host's own kills a chunk.
NEVER_BUSY = [("idle.max_iops", "1000000000"), ("idle.max_throughput", "1TiB"),
              ("idle.max_busy", "1"), ("idle.preempt_interval", "0s")]
IDLE_WINDOW = "1s"
SAMPLE_INTERVAL = "250ms"
BACKEND = "w5-backend"


class Fstrims:
    """fstrim on every host, host i starting delays[i] seconds after start()."""

    def __init__(self, mounts, delays, raw):
        self.mounts, self.delays, self.raw = mounts, delays, raw
        self.procs = []
        self.started = None

    @classmethod
    def spread(cls, mounts, window_s, raw, seed=5):
        rng = random.Random(seed)  # the same delays in every round
        return cls(mounts, [rng.uniform(0, window_s) for _ in mounts], raw)

    def start(self, now):
        self.started = now
        for i, (mnt, delay) in enumerate(zip(self.mounts, self.delays)):
            self.procs.append(spawn(["sh", "-c", 'sleep "$1"; exec fstrim -v "$2"', "sh",
                                     f"{delay:.3f}", mnt],
                                    log_path=os.path.join(self.raw, f"fstrim-{i:02d}.log")))

    def poll(self, now, done_at):
        for i, proc in enumerate(self.procs):
            if i not in done_at and proc.poll() is not None:
                if proc.returncode != 0:
                    raise HarnessError(f"fstrim on {self.mounts[i]} failed ({proc.returncode})")
                done_at[i] = now

    def started_at(self, i):
        return self.started + self.delays[i]

    def stop(self):
        for proc in self.procs:
            stop(proc, grace=1.0, hard_grace=600.0)

    def events(self):
        return {}


class Trimds:
    """One trimd per host; with `etcd_url`, [fleet] with `max_concurrent` (and
    `fleet_duty`, its duty budget); `host_duty`: [trim] duty on every host."""

    def __init__(self, bench, mounts, raw, etcd_url=None, max_concurrent=None, fleet_duty=None,
                 host_duty=None):
        self.bench, self.mounts, self.raw = bench, mounts, raw
        self.configs = [self._config(i, mnt, etcd_url, max_concurrent, fleet_duty, host_duty)
                        for i, mnt in enumerate(mounts)]
        self.logs = [os.path.join(raw, f"trimd-{i:02d}.log") for i in range(len(mounts))]
        self.procs = []
        self.started = None

    def _config(self, i, mnt, etcd_url, max_concurrent, fleet_duty, host_duty):
        path = os.path.join(self.bench.scratch("w5-policy"), f"host{i:02d}.toml")
        duty = [("trim.duty", host_duty)] if host_duty else []
        trimd.write_config(path, mnt, IDLE_WINDOW, SAMPLE_INTERVAL,
                           overrides=NEVER_BUSY + duty + self.bench.overrides)
        if etcd_url:
            with open(path, "a") as f:
                f.write(f'[fleet]\netcd = ["{etcd_url}"]\nmax_concurrent = {max_concurrent}\n'
                        f'backend = "{BACKEND}"\n')
                # Written even when none: the cap alone, whatever the default.
                f.write(f'duty = "{fleet_duty or "0"}"\n')
        trimd.check_config(self.bench.trimd, path)
        return path

    def start(self, now):
        self.started = now
        for i, config in enumerate(self.configs):
            state = self.bench.state_dir(f"w5-host{i:02d}")
            self.procs.append(spawn(trimd.base_args(self.bench.trimd, config, state),
                                    log_path=self.logs[i]))
        wait_until(lambda: self._all_started(), 30, interval=0.1, what="every host's trimd to start")

    def _all_started(self):
        for proc, log in zip(self.procs, self.logs):
            if proc.poll() is not None:
                raise HarnessError(f"trimd exited ({proc.returncode}); see {log}")
        return all(trimd.started(log) for log in self.logs)

    def poll(self, _now, done_at):
        for i, (log, mnt) in enumerate(zip(self.logs, self.mounts)):
            if i in done_at:
                continue
            ends = [e for e in trimd.parse_log(log) if e["kind"] == "pass_end" and e["mount"] == mnt]
            if ends:
                done_at[i] = ends[0]["t"]

    def started_at(self, _i):
        return self.started

    def stop(self):
        for proc in self.procs:
            stop(proc, grace=30.0, hard_grace=600.0)

    def events(self):
        return {i: trimd.parse_log(log) for i, log in enumerate(self.logs)}


def slot_intervals(events_by_host, until):
    """(acquired, released) of every fleet slot the hosts' trimds held."""
    out = []
    for events in events_by_host.values():
        held = None
        for e in events:
            if e["kind"] == "slot_acquired" and held is None:
                held = e["t"]
            elif e["kind"] == "slot_released" and held is not None:
                out.append((held, e["t"]))
                held = None
        if held is not None:
            out.append((held, until))
    return out


def chunk_intervals(events_by_host, until):
    """(start, end) of every FITRIM call the hosts' trimds made: from a
    chunk's line to the host's next chunk, pause or pass end."""
    out = []
    for events in events_by_host.values():
        for i, e in enumerate(events):
            if e["kind"] != "chunk":
                continue
            later = [n["t"] for n in events[i + 1:]
                     if n["kind"] in ("chunk", "pause", "pass_end", "runner_killed")]
            out.append((e["t"], later[0] if later else until))
    return out
