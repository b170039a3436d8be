"""What a shared backend sees over time (W5): in a thread, every
`interval`, the backing file's allocation, the loop device's requests in
flight and discards done (/proc/diskstats), how many hosts' partitions have
a discard in flight at that instant, slowtrim's counters (its --stats file,
as it last wrote it) and, with an etcd, the keys under the fleet's prefix."""
import json

from . import etcd
from .disks import PeriodicSampler, allocated

ETCD_EVERY = 0.5  # seconds between two reads of the fleet's keys


def read_all_diskstats(names):
    """{name: (in_flight, discards completed)} of the given block devices."""
    out = {}
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] in names:
                out[fields[2]] = (int(fields[11]), int(fields[14]) if len(fields) > 14 else 0)
    return out


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


class BackendSampler(PeriodicSampler):
    def __init__(self, backing, disk_name, host_names, stats_path, interval=0.1,
                 etcd_url=None, etcd_prefix=None):
        super().__init__(interval)
        self.backing = backing
        self.disk_name = disk_name
        self.host_names = list(host_names)
        self.names = {disk_name, *self.host_names}
        self.stats_path = stats_path
        self.etcd_url, self.etcd_prefix = etcd_url, etcd_prefix
        self.samples = []         # {t, alloc, in_flight, discards, hosts_discarding}
        self.slowtrim = []        # (t, discards, discard_ns) at each new --stats snapshot
        self.etcd_keys = []       # (t, keys under the prefix)
        self._last_sequence = None
        self._next_etcd = 0.0

    def sample(self, now):
        stats = read_all_diskstats(self.names)
        disk = stats.get(self.disk_name, (0, 0))
        self.samples.append({"t": now, "alloc": allocated(self.backing), "in_flight": disk[0],
                             "discards": disk[1],
                             "hosts_discarding": sum(1 for h in self.host_names
                                                     if stats.get(h, (0, 0))[0] > 0)})
        snapshot = read_json(self.stats_path)
        if snapshot.get("sequence") not in (None, self._last_sequence):
            self._last_sequence = snapshot["sequence"]
            self.slowtrim.append((now, snapshot.get("discards", 0), snapshot.get("discard_ns", 0)))
        if self.etcd_url and now >= self._next_etcd:
            keys = etcd.keys_under(self.etcd_url, self.etcd_prefix)
            if keys is not None:
                self.etcd_keys.append((now, len(keys)))
            self._next_etcd = now + ETCD_EVERY


def rates(snapshots):
    """(t, discards per second, share of the time the disk was held by
    discards) between consecutive counter snapshots (t, discards, discard_ns)."""
    out = []
    for (t0, d0, ns0), (t1, d1, ns1) in zip(snapshots, snapshots[1:]):
        span = t1 - t0
        if span > 0:
            out.append((t1, (d1 - d0) / span, (ns1 - ns0) / 1e9 / span))
    return out


def max_overlap(intervals):
    """The most intervals (start, end) open at one instant; one that ends
    where another starts does not overlap it."""
    edges = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals],
                   key=lambda edge: (edge[0], edge[1]))
    best = current = 0
    for _, step in edges:
        current += step
        best = max(best, current)
    return best
