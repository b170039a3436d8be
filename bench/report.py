#!/usr/bin/python3
"""Writes report.md (and the charts) from a run's results.json.

    bench/report.py OUT_DIR     re-renders OUT_DIR/report.md
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import report_charts  # noqa: E402
import report_fio  # noqa: E402
import report_w5  # noqa: E402
import report_w6  # noqa: E402
from report_header import header  # noqa: E402
from report_targets import all_targets, percentile, ratio, rm_sync, target, x  # noqa: E402
from workloads.w3_idle_throughput import pass_seconds as w3_pass_seconds  # noqa: E402

MiB = 2**20
GiB = 2**30


def have_matplotlib():
    return report_charts.available()


def f(value, digits=2, unit=""):
    return "—" if value is None else f"{value:.{digits}f}{unit}"


def mib(value):
    return "—" if value is None else f"{value / MiB:.1f}"


def lat(summary):
    """p50 / p99 / max in ms."""
    return " / ".join(f(summary[k], 2) for k in ("p50", "p99", "max"))


def slow_share(samples, threshold_ms):
    """The share of probe writes that took `threshold_ms` or longer: those
    that waited for a discard. Unlike p99, it says how long the trim was in
    the way, whatever the noise of this machine does to the tail."""
    if not samples:
        return "—"
    slow = sum(1 for s in samples if s[1] >= threshold_ms)
    return f"{100.0 * slow / len(samples):.1f}%"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def verdict(met):
    return {True: "**met**", False: "**missed**", "noise": "**noise**",
            None: "not measured"}[met]


def w5_targets(results):
    w5 = results.get("workloads", {}).get("W5")
    return report_w5.targets(w5, target) if w5 else []


def w6_targets(results):
    w6 = results.get("workloads", {}).get("W6")
    return report_w6.targets(w6, target) if w6 else []


def targets_section(results):
    rows = [[t["workload"], t["what"], t["value"], t["limit"], verdict(t["met"]), t["why"]]
            for t in all_targets(results) + w5_targets(results) + w6_targets(results)]
    return ("## Targets\n\n"
            "A repeated ratio is the median of the paired ratios (each run beside its baseline) "
            "with its bootstrap 95% interval in brackets: **met** when the whole interval is "
            "within the limit, **missed** when it is all beyond, **noise** when it straddles "
            "the limit (this machine cannot tell).\n\n"
            + table(["", "target", "measured", "limit", "", "note"], rows))


def w1_section(w1, charts, _small_chunk, latency_ms):
    out = ["## W1: delete storm\n"]
    for fs, data in w1["fs"].items():
        c = data["configs"]
        base = c.get("nodiscard")
        w = data["written"]
        out.append(f"### {fs}\n\n{w1_files(data)} deleted with `rm -r` + `sync`; freed "
                   f"{mib(w['del'])} MiB between {mib(w['keep'])} MiB kept. The fstrim'd twin "
                   f"(no discard, then fstrim) ends at {mib(data.get('reference_alloc'))} MiB "
                   f"allocated, after {data.get('reference_discards')} discards; fstrim over "
                   f"64 MiB ranges then goes down to {mib(data.get('reference_floor'))} MiB."
                   + in_use_note(data) + "\n")
        rows = []
        for name, r in c.items():
            rows.append([name, rm_sync_cell(r), x(ratio(rm_sync(r), base and rm_sync(base))),
                         lat(r["probe"]["write"]),
                         x(ratio(r["probe"]["write"]["p99"], base and base["probe"]["write"]["p99"])),
                         slow_share(r["probe_samples"], latency_ms),
                         lat(r["probe"]["read"]), f(r.get("reclaim_s"), 1),
                         mib(r["alloc_end"]),
                         x(ratio(r["alloc_end"], data.get("reference_alloc"))),
                         mib(r["residual"]["reclaimed"]), mib(r["residual"]["below_fstrim"]),
                         *sent_cells(r.get("sent"), data.get("fstrim_discards")),
                         f(r["slowtrim"]["discard_ns"] / 1e9, 1)])
        out.append(table(["config", "rm+sync s", "× no discard", "write ms", "p99 ×",
                          f"writes ≥ {latency_ms:g} ms", "read ms", "reclaimed after s", "alloc MiB",
                          "× fstrim'd", "left for fstrim MiB", "+ stepped MiB", *SENT_HEADER, "discarding s"],
                         rows))
        if c.get("trimd"):
            out.append("*trimd*: " + trimd_pass_line(c["trimd"]))
        if c.get("takeover"):
            opts = c["takeover"].get("mount_options", {})
            out.append("*takeover*: superblock options `" + ",".join(opts.get("before", []))
                       + "` → `" + ",".join(opts.get("after", [])) + "`; "
                       + trimd_pass_line(c["takeover"]))
        out += [f"![W1 {fs}]({name})\n" for name in charts.get(f"W1-{fs}", [])]
    out.append(f"*{SENT_HEADER[0]}*, *{SENT_HEADER[1]}*: what the device was sent during the "
               "run (the loop device's diskstats: discard ios and sectors); *× fstrim*: against "
               "the discards of the fstrim'd twin's fstrim.\n")
    out.append("*reclaimed after*: from the start of `rm` until the backing file is back to the "
               "fstrim'd twin's floor (its allocation after fstrim over 64 MiB ranges, but for 1% "
               "of what that freed); — = not within the run. *left for fstrim*: what an fstrim on the "
               "same image reclaimed afterwards; "
               "*+ stepped*: what fstrim over 64 MiB ranges reclaimed after that (xfs: a "
               "whole-AG FITRIM skips most small free extents, see the notes).\n")
    return "\n".join(out)


SENT_HEADER = ("discards sent", "discarded MiB", "discards × fstrim")


def sent_cells(sent, fstrim_discards):
    """Discards issued and bytes discarded (the device's diskstats), and the
    discards against fstrim's on a twin."""
    if not sent:
        return ["—"] * len(SENT_HEADER)
    return [sent["discards"], mib(sent["bytes"]), x(ratio(sent["discards"], fstrim_discards))]


def second_pass_cell(r):
    """A second pass right after the first: its discards, and their share
    of the first pass's."""
    second, first = r.get("second"), r.get("sent")
    if not second or not first:
        return "—"
    share = ratio(second["discards"], first["discards"])
    return f"{second['discards']} ({'—' if share is None else f'{100 * share:.2f}%'})"


def rm_sync_cell(r):
    trials = r.get("rm_sync_trials")
    if not trials:
        return f(r["rm_sync_s"])
    return f"{rm_sync(r):.2f} (median of " + ", ".join(f"{t:.2f}" for t in trials) + ")"


def in_use_note(data):
    """btrfs: the twin fstrim'd on a mount in use, trimd's reference."""
    in_use = data.get("reference_in_use")
    if in_use is None:
        return ""
    return (f" On a mount in use (a file written and committed first) fstrim reaches only "
            f"{mib(in_use)} MiB: no FITRIM reaches the free space btrfs's allocation clusters "
            f"hold until the next mount (docs/design.md). That level moves from mount to mount, so "
            f"trimd's targets compare with an fstrim on trimd's own mount right after its pass "
            f"(below), where the run has one.")


def w1_files(data):
    low, high = data["sizes_kib"]
    return f"{data['files']} files of {low}-{high} KiB"


def trimd_pass_line(r):
    if not r or not r.get("trimd_pass"):
        return ""
    p = r["trimd_pass"]
    logged = p.get("logged") or {}
    preempted = r.get("preemptions")
    redo = (f"{len(preempted)} chunk(s) preempted, {mib(r.get('redone_bytes', 0))} MiB of "
            "discards redone; " if preempted is not None else "")
    return (f"{p['chunks']} chunk(s), {p['pauses']} pause(s) for foreground I/O, {redo}"
            f"{f(p.get('active_s'), 1)} s from first chunk to the end of the pass; "
            f"{mib(logged.get('bytes'))} MiB discarded in {f(logged.get('duration_s'), 1)} s of "
            "trimming (trimd's own count)." + same_mount_note(r) + "\n")


def same_mount_note(r):
    """btrfs: what an fstrim on trimd's mount still reached after its pass."""
    same = r.get("same_mount_fstrim")
    if not same:
        return ""
    return (f" An fstrim on its mount right after the pass: {mib(same['before'])} → "
            f"{mib(same['after'])} MiB with {same['discards']} discards (the reclaim level; "
            f"not counted in *{SENT_HEADER[0]}*).")


def w2_section(w2, charts, small_chunk, latency_ms):
    c = w2["configs"]
    base = c.get("notrim")
    out = ["## W2: trim under load\n",
           f"{mib(w2['freed'])} MiB of fragmented free space on {w2['fs']}, pending; the probe "
           "is the load. fstrim and trimd start a few seconds into it; *trimd-midpass*: the load "
           "starts when trimd's first chunk does; *-small*: the same with `chunk_size = "
           f"\"{small_chunk}\"` (an experiment, not trimd's policy).\n"]
    rows = []
    for name, r in c.items():
        during = r.get("probe_during_trim")
        trim_s = r.get("fstrim_s") if name == "fstrim" else (r.get("trimd_pass") or {}).get("active_s")
        rows.append([name, lat(r["probe"]["write"]),
                     " / ".join(x(ratio(r["probe"]["write"][k], base and base["probe"]["write"][k]))
                                for k in ("p50", "p99", "max")),
                     slow_share(r["probe_samples"], latency_ms),
                     lat(r["probe"]["read"]), lat(during["write"]) if during else "—",
                     f(trim_s, 1), f(r.get("reclaim_after_load_s"), 1), mib(r["alloc_end"]),
                     x(ratio(r["alloc_end"], w2.get("reference_alloc"))),
                     r["slowtrim"]["discards"]])
    out.append(table(["config", "write ms", "× no trim (p50/p99/max)",
                      f"writes ≥ {latency_ms:g} ms", "read ms",
                      "write ms while fstrim ran", "trim s", "reclaimed s after load",
                      "alloc MiB", "× fstrim", "discards"], rows))
    for name, r in c.items():
        if name.startswith("trimd"):
            during = sum(1 for e in r.get("trimd_events", []) if e["kind"] == "chunk"
                         and r["probe_start"] <= e["t"] <= r["probe_end"])
            out.append(f"*{name}*: {during} chunk(s) started during the load; "
                       + trimd_pass_line(r))
    out.append(f"*writes ≥ {latency_ms:g} ms*: the share of probe writes that took at least one "
               "discard's time, i.e. waited for one: how much of the load the trim was in the way "
               "of. The p99 of a shared machine's probe moves with its noise; this does not.\n")
    out.append(reaction_line(w2.get("reaction")))
    out += [f"![W2]({name})\n" for name in charts.get("W2", [])]
    return "\n".join(out)


def reaction_line(reaction):
    if not reaction:
        return ""
    s = reaction.get("samples_ms", [])
    if not s:
        return "*reaction*: no sample (every chunk ended before the write).\n"
    return (f"*reaction*: one 4 KiB write + fdatasync into a chunk in flight, {len(s)} times: the "
            f"runner exited p50 {percentile(s, 50):.1f} ms / p99 {percentile(s, 99):.1f} ms / "
            f"max {max(s):.1f} ms after the write was issued ({reaction.get('missed', 0)} chunks "
            "ended first).\n")


def w3_section(w3, charts, small_chunk, _latency_ms):
    out = ["## W3: idle throughput\n",
           "W2's template (fragmented free space, nothing else running), one full pass each "
           "(round 1; the pass-time target pairs more rounds of fstrim and trimd alone). "
           "*pass s* for trimd: first chunk to the end of the pass (its wall time adds start-up "
           f"and the idle window); *trimd-small*: `chunk_size = \"{small_chunk}\"`, an "
           "experiment.\n"]
    for fs, data in w3["fs"].items():
        base = data["configs"].get("fstrim")
        rows = []
        for name, r in data["configs"].items():
            pass_s = w3_pass_seconds(name, r)
            reclaimed = r["alloc_start"] - r["alloc_end"]
            base_reclaimed = base and base["alloc_start"] - base["alloc_end"]
            s = r["slowtrim"]
            base_sent = base and base.get("sent")
            rows.append([name, f(r["run"]["wall_s"], 1), f(pass_s, 1),
                         x(ratio(pass_s, base and base["run"]["wall_s"])), mib(reclaimed),
                         x(ratio(reclaimed, base_reclaimed)),
                         mib(r["residual"]["reclaimed"] + r["residual"]["below_fstrim"]),
                         *sent_cells(r.get("sent"), base_sent and base_sent["discards"]),
                         second_pass_cell(r), mib(s["bytes_unmapped"]),
                         f(s["discard_ns"] / 1e9, 1), f(r["run"]["cpu_s"], 3),
                         f(r.get("cpu_s_per_gib"), 3)])
        out.append(f"### {fs}\n\n{mib(data['freed'])} MiB freed.\n")
        if len(data.get("rounds", [])) > 1:
            out.append(f"Pass s per round, {data.get('time_baseline', 'fstrim')} / trimd: "
                       + ", ".join(f"{f(r['baseline'], 1)} / {f(r['trimd'], 1)}"
                                   for r in data["rounds"]) + ".\n")
        out.append(table(["config", "wall s", "pass s", "× fstrim", "reclaimed MiB", "× fstrim",
                          "left for stepped fstrim MiB", *SENT_HEADER, "2nd pass discards",
                          "unmapped MiB", "discarding s", "CPU s", "CPU s/GiB"], rows))
    out.append(f"*{SENT_HEADER[0]}*, *{SENT_HEADER[1]}*: the first pass, from the loop device's "
               "diskstats; *2nd pass discards*: the same trim again right after, on the same "
               "mount (its share of the first pass's); *unmapped* and *discarding s* (slowtrim's "
               "counters) cover both passes.\n")
    out += [f"![W3]({name})\n" for name in charts.get("W3", [])]
    return "\n".join(out)


def w4_section(w4, charts, _small_chunk, _latency_ms):
    idle, p = w4.get("idle", {}), w4.get("pass", {})
    run = p.get("run", {})
    rows = [["VmRSS, max while idle", f"{idle.get('rss_max_kib', 0) / 1024:.2f} MiB"],
            ["VmHWM at the end of the idle period", f"{(idle.get('hwm_kib') or 0) / 1024:.2f} MiB"],
            ["CPU while idle", f"{f(idle.get('cpu_s'), 2)} s in {f(idle.get('seconds'), 0)} s = "
                               f"{f(idle.get('cpu_percent'), 3)}% of a core"],
            ["CPU to start and scan", f"{f(idle.get('startup_cpu_s'), 2)} s"],
            ["filesystems trimd tracked", idle.get("tracked")],
            ["--once pass: wall, CPU", f"{f(run.get('wall_s'), 1)} s, {f(run.get('cpu_s'), 3)} s"],
            ["--once pass: VmHWM", f"{(run.get('hwm_kib') or 0) / 1024:.2f} MiB"],
            ["--once pass: discarded (loop diskstats)", f"{mib(p.get('bytes_discarded'))} MiB"],
            ["--once pass: CPU per GiB discarded", f"{f(p.get('cpu_s_per_gib'), 3)} s"],
            ["reclaimed by the pass / left for fstrim after it",
             f"{mib(p.get('reclaimed'))} / {mib(p.get('residual'))} MiB"]]
    out = ["## W4: footprint\n",
           f"{w4['count']} ext4 filesystems of {w4['image_bytes'] // MiB} MiB on plain loop "
           "devices, nothing due (trimd only watches), then one `--once` pass over all of them.\n",
           table(["", "value"], rows)]
    out += [f"![W4]({name})\n" for name in charts.get("W4", [])]
    return "\n".join(out)


def checks_section(results):
    checks = results.get("checks", [])
    failed = [c for c in checks if not c["ok"]]
    out = [f"## Harness checks\n\nWhether the harness and slowtrim's counters add up (not "
           f"speed): {len(checks) - len(failed)} of {len(checks)} held.\n"]
    if failed:
        out.append(table(["", "check", "", "detail"],
                         [[c["workload"], c["name"], "**FAILED**", c["detail"]] for c in failed]))
    rows = [[c["workload"], c["name"], "ok", c["detail"]] for c in checks if c["ok"]]
    out.append("<details><summary>the checks that held</summary>\n\n"
               + table(["", "check", "", "detail"], rows) + "\n</details>\n")
    for name, error in results.get("errors", {}).items():
        out.append(f"**{name} did not finish**: {error}\n")
    return "\n".join(out)


NOTES = """## Notes

- xfs: a FITRIM whose range covers whole allocation groups walks the free
  space by size, 100 extents per batch, and restarts each batch with the
  block number of the extent it stopped at as the *range start*: smaller
  free extents at lower block numbers are skipped (kernel 6.18, measured
  here; see fs/xfs/xfs_discard.c, xfs_trim_gather_extents). fstrim, and
  trimd with chunks of whole AGs, leave most small freed extents of an xfs
  untrimmed, and a second fstrim does not help. A range inside one AG walks
  by block number and reaches them all: the *stepped* columns (fstrim over
  64 MiB ranges afterwards) show what was left.
- The machine is shared: the load average above says how busy it was. A
  10 ms probe's p99 is 40 to 600 samples and moves with CPU contention;
  compare ratios within one run, not across runs.
- Every figure is one run; there are no error bars. rm + sync is timed
  on several twins per configuration, taking turns: the table shows the
  median, the W1 targets the median of the ratios twin by twin.
"""

SECTIONS = {"W1": w1_section, "W2": w2_section, "W3": w3_section, "W4": w4_section,
            "FIO": report_fio.fio_section, "W5": report_w5.w5_section, "W6": report_w6.w6_section}


def write(results, out_dir):
    charts = report_charts.draw_all(results, out_dir)
    charts.update(report_w5.draw(results, out_dir))
    parts = [header(results), targets_section(results)]
    for name, section in SECTIONS.items():
        if name in results.get("workloads", {}):
            parts.append(section(results["workloads"][name], charts,
                                 results["params"].get("small_chunk"),
                                 results["params"]["latency_ms"]))
    parts.append(NOTES)
    parts.append(checks_section(results))
    if not report_charts.available():
        parts.append("*No charts: python3-matplotlib is not installed.*\n")
    path = os.path.join(out_dir, "report.md")
    with open(path, "w") as out:
        out.write("\n".join(parts))
    return path


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(os.path.join(sys.argv[1], "results.json")) as inp:
        results = json.load(inp)
    print(write(results, sys.argv[1]))


if __name__ == "__main__":
    main()
