"""Runs the foreground probe (bench/probe.py) and sums up what it saw."""
import contextlib
import math
import os
import sys
import time

from .guard import EMULATOR_NICE, HarnessError, spawn, stop, wait_until

PROBE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "probe.py")


class Probe:
    """One probe run over `seconds`; `samples` once it has stopped."""

    def __init__(self, probe_file, seconds, out_csv, interval_ms=10.0):
        self.args = EMULATOR_NICE + [sys.executable, PROBE, "--file", probe_file,
                                     "--seconds", f"{seconds:g}", "--interval-ms", f"{interval_ms:g}",
                                     "--out", out_csv]
        self.out_csv = out_csv
        self.seconds = seconds
        self.proc = None
        self.started_at = None
        self.ended_at = None
        self.samples = []

    def start(self):
        self.started_at = time.time()
        self.proc = spawn(self.args, log_path=self.out_csv + ".log")
        return self

    def wait(self):
        try:
            self.proc.wait(timeout=self.seconds + 120)
        except Exception:
            stop(self.proc)
            raise
        self._finish()

    def abort(self):
        if self.proc is not None and self.proc.poll() is None:
            stop(self.proc, grace=5.0)

    def _finish(self):
        self.ended_at = time.time()
        if self.proc.returncode != 0:
            raise HarnessError(f"probe exited with {self.proc.returncode}; see {self.out_csv}.log")
        wait_until(lambda: os.path.exists(self.out_csv), 5, what="the probe's samples")
        self.samples = load(self.out_csv)
        if not self.samples:
            raise HarnessError(f"the probe took no samples ({self.out_csv})")


@contextlib.contextmanager
def running(probe):
    """Starts the probe; stops it if the block fails before it is done."""
    probe.start()
    try:
        yield probe
    finally:
        probe.abort()


def load(path):
    rows = []
    with open(path) as f:
        next(f, None)
        for line in f:
            t, w, r = line.strip().split(",")
            rows.append((float(t), float(w), float(r)))
    return rows


def percentile(values, q):
    """Nearest-rank percentile, q in [0, 100]."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[rank - 1]


def summary(samples, since=None, until=None):
    """p50/p99/max of write+fdatasync and of read latency, in ms."""
    chosen = [s for s in samples
              if (since is None or s[0] >= since) and (until is None or s[0] <= until)]
    out = {"count": len(chosen)}
    for column, name in ((1, "write"), (2, "read")):
        values = [s[column] for s in chosen]
        out[name] = {"p50": percentile(values, 50), "p99": percentile(values, 99),
                     "max": max(values) if values else None}
    return out


def waited_share(samples, threshold_ms):
    """The share of the probe's writes (0..1) that took `threshold_ms` or
    longer: at least one discard's wait on the emulated device."""
    if not samples:
        return None
    return sum(1 for s in samples if s[1] >= threshold_ms) / len(samples)
