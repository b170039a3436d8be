"""The FIO section of the report: each fio foreground per peer, as the
median over rounds, and against no trim as the median of the paired ratios
with its bootstrap 95% interval (lib/ratios.py)."""
import statistics

from lib import ratios

DIRECTIONS = ("read", "write", "fsync")


def median_of(runs, direction, key):
    values = [r["fio"][direction][key] for r in runs if key in r["fio"].get(direction, {})]
    return statistics.median(values) if values else None


def paired_text(runs, base_runs, direction, key):
    """"1.05× [0.98–1.20]" of `key` against the baseline, round by round."""
    mine = [r["fio"].get(direction, {}).get(key) for r in runs]
    base = [r["fio"].get(direction, {}).get(key) for r in base_runs]
    pairs = ratios.paired([m for m, b in zip(mine, base) if m is not None and b is not None],
                          [b for m, b in zip(mine, base) if m is not None and b is not None])
    if not pairs:
        return "—"
    r, low, high = ratios.median_interval(pairs)
    return f"{r:.2f}×" if len(pairs) == 1 else f"{r:.2f}× [{low:.2f}–{high:.2f}]"


def job_table(job, runs_by_peer, baseline):
    header = ["peer", "direction", "p50 ms", "p99 ms", "p99.9 ms", "p99 × no trim", "IOPS",
              "IOPS × no trim", "discards during", "alloc MiB after"]
    rows = []
    base_runs = runs_by_peer[baseline]
    for peer, runs in runs_by_peer.items():
        for direction in DIRECTIONS:
            if median_of(runs, direction, "p50") is None:
                continue
            iops = median_of(runs, direction, "iops")
            rows.append([peer, direction] +
                        [f"{median_of(runs, direction, k):.2f}" for k in ("p50", "p99", "p99.9")] +
                        [paired_text(runs, base_runs, direction, "p99"),
                         "—" if iops is None else f"{iops:.0f}",
                         "—" if iops is None else paired_text(runs, base_runs, direction, "iops"),
                         f"{statistics.median(r['discards_during'] for r in runs):.0f}",
                         f"{statistics.median(r['alloc_end'] for r in runs) / 2**20:.1f}"])
    lines = [f"### {job}\n", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def fio_section(fio, _charts, _small_chunk, _latency_ms):
    out = ["## FIO: real foregrounds\n",
           "fio (4 KiB, O_DIRECT) while a delete storm frees space; medians over the rounds, "
           "ratios against no trim round by round with their 95% interval. *discards during*: "
           "what the device received while the job ran; *alloc after*: the backing file when "
           "it ended (trimd reclaims once the disk is idle, after the job).\n"]
    for fs_type, data in fio.get("fs", {}).items():
        out.append(f"**{fs_type}**\n")
        for job, runs_by_peer in data.get("jobs", {}).items():
            out.append(job_table(job, runs_by_peer, "notrim"))
    return "\n".join(out)
