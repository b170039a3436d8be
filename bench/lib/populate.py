"""Filling template filesystems.

Fragmented free space: files to delete are written alternately with files
to keep, so that after deleting one set every freed extent sits between two
kept ones. They are created in one directory and only then renamed into
del/ and keep/: xfs puts new directories in different allocation groups
(and ext4 may too), which would keep the two sets apart on disk.
"""
import os
import random

PROBE_FILE = "probe.dat"
PROBE_BYTES = 64 * 1024 * 1024
SYNC_EVERY = 2000  # files; writeback then follows creation order


def write_file(path, payload, size):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(payload)
        done = 0
        while done < size:
            done += os.write(fd, view[:min(len(payload), size - done)])
    finally:
        os.close(fd)


def interleaved_sets(root, pairs, sizes, seed=1):
    """Writes `pairs` files to delete and as many to keep, alternately;
    `sizes` is a list of sizes to draw from. Returns bytes written per set."""
    rnd = random.Random(seed)
    payload = os.urandom(max(sizes))
    staging = os.path.join(root, "all")
    os.makedirs(staging)
    written = {"del": 0, "keep": 0}
    for i in range(pairs):
        for kind in ("del", "keep"):
            size = rnd.choice(sizes)
            write_file(os.path.join(staging, f"{kind}.{i:07d}"), payload, size)
            written[kind] += size
        if i % SYNC_EVERY == SYNC_EVERY - 1:
            os.sync()
    os.sync()
    for kind in ("del", "keep"):
        os.mkdir(os.path.join(root, kind))
    for name in os.listdir(staging):
        kind = name.split(".")[0]
        os.rename(os.path.join(staging, name), os.path.join(root, kind, name))
    os.rmdir(staging)
    os.sync()
    return written


def probe_file(root, size=PROBE_BYTES):
    """The probe's file, written with data: reads of unwritten extents would
    not reach the disk, and overwriting it allocates nothing."""
    path = os.path.join(root, PROBE_FILE)
    chunk = os.urandom(1024 * 1024)
    write_file(path, chunk * (size // len(chunk)), size)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def sizes_kib(low, high, step=4):
    return [k * 1024 for k in range(low, high + 1, step)]
