"""The FIO section of the report: each fio foreground per peer, as the
median over rounds, and against its timeline's baseline (no trim during
the storm, or no trim after it) as the median of the paired ratios with its
bootstrap 95% interval (lib/ratios.py), and the p99 verdict."""
import statistics

from lib import ratios

DIRECTIONS = ("read", "write", "fsync")
P99_LIMIT = 1.25
BASELINE = "notrim"  # results written before the trim timeline: every peer against it
VERDICTS = {True: "**met**", False: "**missed**", "noise": "**noise**", None: "not measured"}


def median_of(runs, direction, key):
    values = [r["fio"][direction][key] for r in runs if key in r["fio"].get(direction, {})]
    return statistics.median(values) if values else None


def paired_ratios(runs, base_runs, direction, key):
    """`key` of each run over that of its baseline's run in the same round
    (by their "round", else by position)."""
    def by_round(rs):
        return {r.get("round", i): r["fio"].get(direction, {}).get(key) for i, r in enumerate(rs)}
    mine, base = by_round(runs), by_round(base_runs)
    rounds = [i for i in mine if mine[i] is not None and base.get(i) is not None]
    return ratios.paired([mine[i] for i in rounds], [base[i] for i in rounds])


def ratio_text(pairs):
    """"1.05× [0.98–1.20]", or one ratio as it is."""
    if not pairs:
        return "—"
    r, low, high = ratios.median_interval(pairs)
    return f"{r:.2f}×" if len(pairs) == 1 else f"{r:.2f}× [{low:.2f}–{high:.2f}]"


def p99_verdict(pairs):
    """Met, missed or noise for p99 ≤ P99_LIMIT × the baseline; None
    without a pair."""
    if not pairs:
        return None
    _, low, high = ratios.median_interval(pairs)
    return ratios.judge(low, high, P99_LIMIT)


def peer_note(runs):
    """What the peer was doing when fio started, over the rounds."""
    n = len(runs)
    if any("trimd" in r for r in runs):
        t = [r["trimd"] for r in runs if "trimd" in r]
        kills = [x["killed_after_fio_s"] for x in t if x.get("killed_after_fio_s") is not None]
        return (f"chunk in flight at fio's start {sum(x['in_flight_at_fio'] for x in t)}/{n}, "
                f"preempted {sum(x['preempted'] > 0 for x in t)}/{n}"
                + (f" ({statistics.median(kills) * 1e3:.0f} ms after fio's start, median; "
                   "trimd's log)" if kills else "")
                + f", pass over before fio {sum(x['pass_ended_before_fio'] for x in t)}/{n}")
    flags = [r.get("discarding_at_start") for r in runs if r.get("discarding_at_start") is not None]
    return f"discarding at fio's start {sum(flags)}/{n}" if flags else ""


def never_discarding(runs):
    """A trim-timeline peer that sent no discard before fio started in any
    round: its ratio says nothing about its discards."""
    flags = [r.get("discarding_at_start") for r in runs]
    return bool(runs) and all(f is False for f in flags)


def verdict_text(runs, pairs):
    if never_discarding(runs):
        return "void: never discarding at fio's start"
    return VERDICTS[p99_verdict(pairs)]


def row(peer, baseline, runs, base_runs, direction):
    def cell(key, digits=2):
        v = median_of(runs, direction, key)
        return "—" if v is None else f"{v:.{digits}f}"
    own = peer == baseline
    p99_pairs = [] if own else paired_ratios(runs, base_runs, direction, "p99")
    iops_pairs = [] if own else paired_ratios(runs, base_runs, direction, "iops")
    starts = [r["fio_start_s"] for r in runs if r.get("fio_start_s") is not None]
    return [peer, direction, cell("p50"), cell("p99"), cell("p99.9"), cell("iops", 0),
            "baseline" if own else baseline, "1" if own else ratio_text(p99_pairs),
            "—" if own else verdict_text(runs, p99_pairs),
            "1" if own else ratio_text(iops_pairs),
            f"{statistics.median(starts):+.1f}" if starts else "—",
            f"{statistics.median(r['discards_during'] for r in runs):.0f}",
            f"{statistics.median(r['alloc_end'] for r in runs) / 2**20:.1f}", peer_note(runs)]


def job_table(job, runs_by_peer, baselines):
    header = ["peer", "direction", "p50 ms", "p99 ms", "p99.9 ms", "IOPS", "against",
              "p99 × baseline", f"p99 ≤ {P99_LIMIT}×", "IOPS × baseline", "fio start − storm s",
              "discards during fio", "alloc MiB after", "peer at fio's start"]
    rows = []
    for peer, runs in runs_by_peer.items():
        baseline = baselines.get(peer, BASELINE)
        for direction in DIRECTIONS:
            if median_of(runs, direction, "p50") is not None:
                rows.append(row(peer, baseline, runs, runs_by_peer.get(baseline, []), direction))
    lines = [f"### {job}\n", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def fio_section(fio, _charts, _small_chunk, _latency_ms):
    out = ["## FIO: real foregrounds\n",
           "fio (4 KiB, O_DIRECT) beside a delete storm, in two timelines. *During the storm*: "
           "fio starts, the storm (`rm -r` + `sync`) comes a few seconds later; no trim "
           "(`notrim`, the baseline), `-o discard`, fstrim right after the storm's sync. "
           "*During the peer's trim*: the storm, then fio once the peer is discarding (the "
           "device's discard counter rose): trimd (idle window "
           f"{fio.get('trimd_idle_window', '?')}, so that its pass starts soon; fio's first I/O "
           "preempts the chunk in flight) and btrfs "
           "`discard=async` (default limits; it waits 120 s), against no trim after the storm "
           "(`notrim-after`, fio right after the sync). Medians over the rounds; ratios against "
           "the baseline's run of the same round, with their 95% interval; the verdict holds "
           f"p99 to ≤ {P99_LIMIT}× the baseline (met / missed / noise by the interval). "
           "*fio start − storm*: when fio started, from the storm's start; *discards during "
           "fio*: what the device completed while the job ran (diskstats); *alloc after*: the "
           "backing file when the run ended.\n"]
    baselines = fio.get("baselines", {})
    for fs_type, data in fio.get("fs", {}).items():
        out.append(f"**{fs_type}**\n")
        for job, runs_by_peer in data.get("jobs", {}).items():
            out.append(job_table(job, runs_by_peer, baselines))
    return "\n".join(out)
