"""The W5 section of the report (trim storm on one shared backend): the
table per configuration and the charts of the backend over time."""
from lib import ratios
from lib.backend_sampler import rates
import report_charts
import report_w5_duty
from report_targets import ratio, x

MiB = 2**20
COLORS = {"notrim": "tab:blue", "storm": "tab:red", "spread": "tab:orange",
          "trimd-nocap": "tab:purple", "trimd-cap1": "tab:green", "trimd-cap2": "tab:olive",
          "trimd-cap1-duty0.5%": "tab:cyan", "trimd-cap1-duty1%": "tab:brown",
          "trimd-cap1-duty2%": "tab:pink", "trimd-host-duty": "tab:gray"}
SMOOTH_S = 1.0  # hosts discarding at once: the most within each second


def f(value, digits=1):
    return "—" if value is None else f"{value:.{digits}f}"


def paired_p99(w5, name, key="p99_rounds"):
    """"3.10× [2.90–3.40]" against no trim, round by round; one round: one
    ratio. `key`: the whole probe's p99 or the first seconds' (early_p99_rounds)."""
    rounds = w5.get(key, {})
    pairs = ratios.paired(rounds.get(name, []), rounds.get("notrim", []))
    if not pairs:
        return "—", None
    r, low, high = ratios.median_interval(pairs)
    if len(pairs) == 1:
        return x(r), (r, r, r)
    return f"{r:.2f}× [{low:.2f}–{high:.2f}]", (r, low, high)


EARLY = "early_p99_rounds"


def early_key(w5):
    """The first seconds' p99 where the run has it (runs before 2026-12-07 do not)."""
    return EARLY if w5.get(EARLY) else "p99_rounds"


def early_words(w5):
    return f" in the first {w5['early_s']:g} s" if w5.get(EARLY) else ""


def waited_share(samples, threshold_ms):
    if not samples:
        return "—"
    return f"{100.0 * sum(1 for s in samples if s[1] >= threshold_ms) / len(samples):.1f}%"


def last_done_s(r):
    done, start = r.get("done_at") or {}, r.get("trim_started_at")
    return max(done.values()) - start if done and start else None


def busy_rate(r):
    """Mean discards per second while the backend was discarding at all."""
    busy = [d for _, d, _ in rates(r.get("slowtrim_snapshots", [])) if d > 0]
    return sum(busy) / len(busy) if busy else None


def redone_calls(r):
    """FITRIM calls the trimds started beyond those their passes kept: each
    one killed by the chunk time limit and redone from its start."""
    events = r.get("events")
    if not events:
        return None
    redone = 0
    for host in events.values():
        ends = [e for e in host if e["kind"] == "pass_end"]
        kept = ends[0]["chunks"] if ends else 0
        redone += sum(1 for e in host if e["kind"] == "chunk") - kept
    return redone


def at_once_cell(r):
    cells = [str(r.get("max_hosts_discarding", "—"))]
    if r.get("max_slots_at_once") is not None:
        cells.append(f"slots {r['max_slots_at_once']}")
    if r.get("max_chunks_at_once") is not None:
        cells.append(f"chunks {r['max_chunks_at_once']}")
    cap = r.get("max_concurrent")
    return " / ".join(cells) + (f" (cap {cap})" if cap else "")


def handover_gaps(slots, cap):
    """Seconds from a slot's release to the next acquire that it let in:
    every acquire after the first `cap`, against the latest release before it."""
    acquires = sorted(a for a, _ in slots)[cap:]
    releases = sorted(r for _, r in slots)
    gaps = []
    for t in acquires:
        before = [r for r in releases if r <= t]
        if before:
            gaps.append(t - before[-1])
    return gaps


def fleet_line(name, r):
    slots, cap = r.get("slot_intervals") or [], r.get("max_concurrent")
    if not cap:
        return ""
    gaps = sorted(handover_gaps(slots, cap))
    keys = max((k for _, k in r.get("etcd_keys", [])), default=None)
    gap_text = (f"a freed slot was taken {gaps[len(gaps) // 2]:.2f} s later (median; max "
                f"{gaps[-1]:.2f} s)" if gaps else "no hand-over")
    return (f"*{name}*: {len(slots)} slots held in all; {gap_text}; etcd held up to {keys} keys "
            f"under `/trimd/v1/<backend>/` (holders and waiters).\n")


def w5_section(w5, charts, _small_chunk, latency_ms):
    rows = []
    storm = w5["configs"].get("storm")
    for name, r in w5["configs"].items():
        w = r["probe"]["write"]
        done = r.get("done_at") or {}
        rows.append([name, " / ".join(f(w[k], 2) for k in ("p50", "p99", "max")),
                     paired_p99(w5, name)[0] if name != "notrim" else "1",
                     paired_p99(w5, name, EARLY)[0] if name != "notrim" else "1",
                     waited_share(r["probe_samples"], latency_ms),
                     f(r.get("reclaimed_s")), f(last_done_s(r)),
                     f"{len(done)}/{w5['hosts']}" if name != "notrim" else "—", at_once_cell(r),
                     r["slowtrim"]["discards"],
                     x(ratio(r["slowtrim"]["discards"], storm and storm["slowtrim"]["discards"])),
                     "—" if redone_calls(r) is None else redone_calls(r),
                     f(r["slowtrim"]["discard_ns"] / 1e9),
                     f(busy_rate(r), 0), f(r["alloc_end"] / MiB)])
    header = ["config", "tenant write ms p50 / p99 / max", "p99 × no trim",
              f"first {w5.get('early_s', 0):g} s: p99 × no trim",
              f"writes ≥ {latency_ms:g} ms", "all reclaimed s", "last host done s",
              "hosts done", "hosts with I/O in flight at once (max)", "backend discards", "× storm",
              "FITRIM calls redone", "backend discarding s", "discards/s while busy", "alloc MiB after"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    rounds = len(w5.get("p99_rounds", {}).get("notrim", []))
    out = ["## W5: trim storm\n",
           f"{w5['hosts']} hosts' ext4 filesystems of {w5['host_part'] // MiB} MiB and a tenant's, "
           "partitions of one slowtrim device, so that every host's discards queue on the same "
           f"backend; {w5['freed'] / MiB:.1f} MiB freed in small files across the hosts before each "
           f"configuration (a twin of one template). The tenant's probe runs {w5['probe_s']:g} s in "
           f"every configuration; the hosts start {w5['lead_s']:g} s into it: all fstrim at once "
           f"(*storm*), fstrim at random points of {w5['spread_s']:g} s (*spread*), one trimd per "
           "host without a cap, with `[fleet]` `max_concurrent` 1 and 2 through one local "
           "etcd, with one slot and a `[fleet] duty` budget (*cap1-duty*), and with `[trim] duty` "
           "on every host and no cap (*host-duty*); a configuration with a budget runs on after "
           "the probe until every host is done. The shared loop device runs without writeback "
           "throttling (blk-wbt would "
           "let at most 4 discards of all hosts together into its queue, a limit no fleet of "
           "separate VMs has). Every trimd has its own state dir, no bus, a policy limited to its mount, and "
           "idle limits its disk never crosses (a VM cannot see the backend's load), so the "
           f"comparison is about the cap. {rounds} round(s), no trim first in each.\n",
           "\n".join(lines) + "\n",
           f"*p99 × no trim*: the median of the paired ratios round by round, with its bootstrap "
           f"95% interval when there are several; the rest of the row is round 1. *first "
           f"{w5.get('early_s', 0):g} s*: the same over the tenant's writes in the first "
           f"{w5.get('early_s', 0):g} s after the hosts' start, about the storm's length: a storm "
           "of a few seconds is under 1% of a whole probe's writes and would not show in its "
           "p99, so the storm's target (that the setup hurts at all) uses this one. It also holds "
           "the start-up of every host's trimd at once, on this machine's 2 CPUs. *writes ≥ "
           f"{latency_ms:g} ms*: probe writes that waited for at least one discard. *all "
           "reclaimed*: from the hosts' start until the backing file is down to where the storm "
           "left it (but for 1% of what it freed). *hosts with I/O in flight*: the most host "
           "partitions with any request in flight in one sample (/proc/diskstats, every 0.1 s; "
           "the hosts only discard, but a stray write counts too); for trimd also the most "
           "fleet slots held at once and the most FITRIM calls at once, from the trimds' logs, "
           "which the target uses. *discards/s while busy*: slowtrim's counters, the "
           "mean over the seconds with any discard. *× storm*: the backend's discards against the "
           "storm's, which sends each free extent once. *FITRIM calls redone*: calls the trimds "
           "started beyond those their passes kept, i.e. killed by trimd's chunk time limit "
           "(twice `chunk_time`) and redone from their start, their discards sent again.\n"]
    out += [fleet_line(name, r) for name, r in w5["configs"].items() if r.get("max_concurrent")]
    out.append(report_w5_duty.duty_table(w5, paired_p99))
    out += [f"![W5]({name})\n" for name in charts.get("W5", [])]
    return "\n".join(out)


def _most_per_second(samples, t0):
    """(second, most hosts discarding at once within it)."""
    buckets = {}
    for s in samples:
        k = int((s["t"] - t0) // SMOOTH_S)
        buckets[k] = max(buckets.get(k, 0), s["hosts_discarding"])
    return sorted((k * SMOOTH_S, v) for k, v in buckets.items())


def backend_chart(w5, out_dir):
    plt = report_charts.plt
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    for name, r in w5["configs"].items():
        if name == "notrim":
            continue
        t0, color = r["trim_started_at"], COLORS.get(name)
        per_s = rates(r.get("slowtrim_snapshots", []))
        top.plot([t - t0 for t, _, _ in per_s], [d for _, d, _ in per_s], color=color, label=name)
        steps = _most_per_second(r["backend_samples"], t0)
        middle.step([t for t, _ in steps], [v for _, v in steps], where="post", color=color,
                    label=name)
        bottom.plot([s["t"] - t0 for s in r["backend_samples"]],
                    [s["alloc"] / MiB for s in r["backend_samples"]], color=color, label=name)
    for cap in (1, 2):
        middle.axhline(cap, color="grey", lw=0.8, ls=":")
    top.set_ylabel("backend discards/s")
    top.set_title(f"W5: {w5['hosts']} hosts on one slow-TRIM backend (t = 0: hosts start)")
    top.legend(loc="upper right")
    middle.set_ylabel("hosts with I/O in flight")
    bottom.set_ylabel("backing file MiB")
    bottom.set_xlabel("seconds since the hosts started")
    return report_charts._save(fig, out_dir, "w5_backend.png")


def latency_chart(w5, out_dir):
    plt = report_charts.plt
    configs = w5["configs"]
    fig, axes = plt.subplots(len(configs), 1, figsize=(10, 2.2 * len(configs)), sharex=True,
                             sharey=True, squeeze=False)
    for ax, (name, r) in zip(axes[:, 0], configs.items()):
        t0 = r["probe_start"]
        report_charts._latency(ax, r["probe_samples"], t0, name, COLORS.get(name))
        ax.set_title(f"{name}: tenant p99 {r['probe']['write']['p99']:.2f} ms", fontsize=10, loc="left")
    axes[-1, 0].set_xlabel("seconds since the tenant's probe started")
    return report_charts._save(fig, out_dir, "w5_latency.png")


def draw(results, out_dir):
    w5 = results.get("workloads", {}).get("W5")
    if not report_charts.available() or not w5 or not w5.get("configs"):
        return {}
    charts = [backend_chart(w5, out_dir), latency_chart(w5, out_dir),
              report_w5_duty.duty_chart(w5, out_dir, paired_p99)]
    return {"W5": [c for c in charts if c]}


def judge_at_least(low, high, limit):
    """True (met), False (missed) or "noise" for a ratio that must reach `limit`."""
    if low >= limit:
        return True
    if high < limit:
        return False
    return "noise"


def targets(w5, target):
    """The issue's targets for W5, built with report_targets.target."""
    configs = w5.get("configs", {})
    out = []
    if "storm" in configs:
        text, r = paired_p99(w5, "storm", early_key(w5))
        out.append(target("W5", f"tenant p99{early_words(w5)}, every host's fstrim at once, vs no trim",
                          text, "≥ 5×",
                          None if r is None else judge_at_least(r[1], r[2], 5.0),
                          "the storm must hurt for the cap to matter"))
    spread_s = (configs.get("spread") or {}).get("reclaimed_s")
    for name, cap in (("trimd-cap1", 1), ("trimd-cap2", 2)):
        r = configs.get(name)
        if not r:
            continue
        text, p99 = paired_p99(w5, name)
        out.append(target("W5", f"tenant p99, trimd max_concurrent {cap}, vs no trim", text,
                          "≤ 1.25×", None if p99 is None else ratios.judge(p99[1], p99[2], 1.25)))
        mine = r.get("reclaimed_s")
        out.append(target("W5", f"every host reclaimed, trimd max_concurrent {cap}, vs fstrim spread",
                          f"{f(mine)} vs {f(spread_s)} s", "≤ spread",
                          None if spread_s is None else (mine is not None and mine <= spread_s),
                          f"spread: fstrim at random points of {w5['spread_s']:g} s"))
        out.append(at_once_target(f"max_concurrent {cap}", r, cap, target))
    for name in report_w5_duty.budgeted(w5):
        cap = configs[name].get("max_concurrent")
        if cap:
            out.append(at_once_target(f"{name}", configs[name], cap, target))
    return out + report_w5_duty.targets(w5, target, paired_p99)


def at_once_target(what, r, cap, target):
    logged = [v for v in (r.get("max_slots_at_once"), r.get("max_chunks_at_once")) if v is not None]
    most = max(logged) if logged else None
    return target("W5", f"hosts trimming at once, {what}",
                  f"{most} (slots {r.get('max_slots_at_once')}, FITRIM calls "
                  f"{r.get('max_chunks_at_once')})", f"≤ {cap}",
                  None if most is None else most <= cap,
                  f"from the trimds' logs; partitions with I/O in flight, sampled: "
                  f"{r.get('max_hosts_discarding')}")
