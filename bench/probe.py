#!/usr/bin/python3
"""Foreground latency probe: every INTERVAL, a 4 KiB write + fdatasync and a
4 KiB O_DIRECT random read on FILE (which must already hold data, so reads
reach the disk and writes allocate nothing). Writes one CSV line per tick,
"wall_time,write_ms,read_ms", to OUT when it stops: after SECONDS, or on
SIGTERM/SIGINT.

A tick that comes late because the previous one took long is not made up
for: the probe measures what a steady, light foreground load sees, it does
not pile up requests.
"""
import argparse
import mmap
import os
import random
import signal
import sys
import time

BLOCK = 4096


class Stop(Exception):
    pass


def on_signal(_signum, _frame):
    raise Stop()


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--file", required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--interval-ms", type=float, default=10.0)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args()


def probe_once(write_fd, read_fd, blocks, rnd, payload, read_buf):
    offset = rnd.randrange(blocks) * BLOCK
    t0 = time.perf_counter()
    os.pwrite(write_fd, payload, offset)
    os.fdatasync(write_fd)
    t1 = time.perf_counter()
    os.preadv(read_fd, [read_buf], rnd.randrange(blocks) * BLOCK)
    t2 = time.perf_counter()
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3


def main():
    args = parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    blocks = os.path.getsize(args.file) // BLOCK
    if blocks == 0:
        sys.exit(f"probe: {args.file} is empty")
    write_fd = os.open(args.file, os.O_WRONLY)
    read_fd = os.open(args.file, os.O_RDONLY | os.O_DIRECT)
    read_buf = mmap.mmap(-1, BLOCK)  # page aligned, as O_DIRECT needs
    rnd = random.Random(args.seed)
    payload = os.urandom(BLOCK)
    interval = args.interval_ms / 1e3
    rows = []
    start = time.monotonic()
    next_tick = start
    try:
        while time.monotonic() - start < args.seconds:
            wall = time.time()
            w, r = probe_once(write_fd, read_fd, blocks, rnd, payload, read_buf)
            rows.append(f"{wall:.6f},{w:.4f},{r:.4f}")
            next_tick += interval
            delay = next_tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                next_tick = time.monotonic()
    except Stop:
        pass
    finally:
        with open(args.out + ".tmp", "w") as f:
            f.write("wall_time,write_ms,read_ms\n")
            f.write("\n".join(rows) + ("\n" if rows else ""))
        os.rename(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
