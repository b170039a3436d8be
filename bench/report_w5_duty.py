"""W5 with a duty budget (issue 34): the configurations whose trimds keep
their discards to a share of the backend's time, against one slot without
one; their table, their chart (tenant p99 and time to reclaim against the
budget) and the issue's targets for one slot at 1%."""
import statistics

from lib import ratios
import report_charts
from report_targets import x

TARGET_DUTY = 0.01       # the targets are for cap 1 and [fleet] duty = "1%"
P99_LIMIT = 1.25
WAITED_SLACK = 0.01      # writes that waited: no trim's share + 1 point
DUTY_TOLERANCE = 1.2     # measured duty within 1.2x of the budget, either way
RECLAIM_LIMIT = 1.25     # every host reclaimed within 1.25 x device time / budget
NO_BUDGET = "trimd-cap1"


def budgeted(w5):
    """{name: budget} of the configurations with a budget, smallest first."""
    duties = {n: d for n, d in (w5.get("duties") or {}).items() if d and n in w5["configs"]}
    return dict(sorted(duties.items(), key=lambda item: item[1]))


def device_s(r):
    """The backend's device time for the whole run: slowtrim's discard_ns."""
    return r["slowtrim"]["discard_ns"] / 1e9


def discarding_span(r):
    """Seconds from the first discard the backend's loop device counted to
    the last (its /proc/diskstats, sampled every 0.1 s)."""
    samples = r.get("backend_samples") or []
    changed = [s["t"] for a, s in zip(samples, samples[1:]) if s["discards"] != a["discards"]]
    return changed[-1] - changed[0] if len(changed) >= 2 else None


def measured_duty(r):
    """The backend's busy share while the hosts discarded: slowtrim's own
    discard time over that span."""
    span = discarding_span(r)
    return device_s(r) / span if span else None


def expected_reclaim_s(r, duty):
    return device_s(r) / duty if duty else None


def reclaimed_s(r):
    """Every host reclaimed: the backing file down to the storm's level
    (W5's "all reclaimed") and every host's pass ended (its discards had
    completed), whichever came later."""
    done, start = r.get("done_at") or {}, r.get("trim_started_at")
    last = max(done.values()) - start if done and start else None
    known = [v for v in (r.get("reclaimed_s"), last) if v is not None]
    return max(known) if known else None


def waited_excess(w5, name):
    """Median over the rounds of (share of the tenant's writes that waited)
    minus no trim's in the same round; with the two medians for the table."""
    rounds = w5.get("waited_rounds") or {}
    mine, base = rounds.get(name) or [], rounds.get("notrim") or []
    diffs = [a - b for a, b in zip(mine, base) if a is not None and b is not None]
    if not diffs:
        return None, None, None
    return (statistics.median(diffs), statistics.median([a for a in mine if a is not None]),
            statistics.median([b for b in base if b is not None]))


def pct(value, digits=1):
    return "—" if value is None else f"{100 * value:.{digits}f}%"


def seconds(value):
    return "—" if value is None else f"{value:.1f}"


def duty_rows(w5, paired_p99):
    names = list(budgeted(w5))
    if NO_BUDGET in w5["configs"]:
        names.insert(0, NO_BUDGET)
    rows = []
    for name in names:
        r, duty = w5["configs"][name], budgeted(w5).get(name)
        excess, mine, base = waited_excess(w5, name)
        measured = measured_duty(r)
        expected = expected_reclaim_s(r, duty)
        reclaimed = reclaimed_s(r)
        rows.append([name, pct(duty, 2) if duty else "none", paired_p99(w5, name)[0],
                     f"{pct(mine)} ({pct(base)})", pct(measured, 2),
                     x(measured / duty) if measured and duty else "—", f"{device_s(r):.2f}",
                     seconds(reclaimed), seconds(expected),
                     x(reclaimed / expected) if reclaimed and expected else "—"])
    return rows


def duty_table(w5, paired_p99):
    rows = duty_rows(w5, paired_p99)
    if len(rows) < 2:
        return ""
    header = ["config", "budget (the fleet's)", "tenant p99 × no trim",
              "writes ≥ 1 discard, median of rounds (no trim's)", "measured duty", "× budget",
              "device time s", "all reclaimed s", "device time / budget s", "×"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return ("### The duty budget\n\n" + "\n".join(lines) + "\n\n"
            "*budget*: `[fleet] duty` with one slot, or `[trim] duty` on every host without a "
            f"cap ({w5['hosts']} hosts: the fleet's is {w5['hosts']} times the host's). "
            "*measured duty*: slowtrim's discard time over the span from the first discard the "
            "backend's loop device counted to the last. *device time*: slowtrim's discard time "
            "in the run. *all reclaimed*: as above, and every host's pass ended (its discards "
            "had completed), whichever came later.\n")


def duty_chart(w5, out_dir, paired_p99):
    duties = budgeted(w5)
    if not duties or not report_charts.available():
        return None
    plt = report_charts.plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    xs = [100 * d for d in duties.values()]
    p99 = [paired_p99(w5, name)[1] for name in duties]
    for xv, r, name in zip(xs, p99, duties):
        if r is None:
            continue
        left.errorbar([xv], [r[0]], yerr=[[r[0] - r[1]], [r[2] - r[0]]], fmt="o", capsize=4,
                      color="tab:green" if "cap1" in name else "tab:purple")
        left.annotate(name.replace("trimd-", ""), (xv, r[0]), textcoords="offset points",
                      xytext=(5, 5), fontsize=8)
    left.axhline(P99_LIMIT, color="grey", ls=":", lw=1)
    left.axhline(1.0, color="grey", lw=0.6)
    left.set_xscale("log")
    left.set_xlabel("the fleet's duty budget, % of the backend's time (log)")
    left.set_ylabel("tenant write p99 × no trim (median, 95% interval)")
    left.set_title("what the tenant pays", fontsize=10)
    reclaimed = [reclaimed_s(w5["configs"][n]) for n in duties]
    expected = [expected_reclaim_s(w5["configs"][n], d) for n, d in duties.items()]
    right.plot(xs, reclaimed, "o", color="tab:green", label="every host reclaimed (measured)")
    right.plot(xs, expected, "--", color="grey", label="device time / budget")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("the fleet's duty budget, % of the backend's time (log)")
    right.set_ylabel("seconds from the hosts' start (log)")
    right.set_title("how long reclaiming takes", fontsize=10)
    right.legend(fontsize=8)
    fig.suptitle(f"W5: {w5['hosts']} hosts on one slow-TRIM backend, with a duty budget")
    return report_charts._save(fig, out_dir, "w5_duty.png")


def targets(w5, target, paired_p99):
    name = next((n for n, d in budgeted(w5).items() if abs(d - TARGET_DUTY) < 1e-9 and
                 w5["configs"][n].get("max_concurrent") == 1), None)
    if name is None:
        return []
    r = w5["configs"][name]
    text, p99 = paired_p99(w5, name)
    out = [target("W5", "tenant p99, max_concurrent 1 and [fleet] duty 1%, vs no trim", text,
                  f"≤ {P99_LIMIT}×", None if p99 is None else ratios.judge(p99[1], p99[2], P99_LIMIT),
                  "the whole interval below the limit to be met")]
    excess, mine, base = waited_excess(w5, name)
    out.append(target("W5", "tenant writes that waited ≥ 1 discard, duty 1%, vs no trim",
                      f"{pct(mine)} vs {pct(base)} (+{pct(excess)})", "≤ no trim's + 1 point",
                      None if excess is None else excess <= WAITED_SLACK,
                      "median over the rounds of the difference in the same round"))
    measured = measured_duty(r)
    off = measured / TARGET_DUTY if measured else None
    out.append(target("W5", "measured duty of the backend, [fleet] duty 1%",
                      f"{pct(measured, 2)} ({x(off)} the budget)", f"within {DUTY_TOLERANCE}×",
                      None if off is None else 1 / DUTY_TOLERANCE <= off <= DUTY_TOLERANCE,
                      "slowtrim's discard time over the span the backend discarded"))
    expected = expected_reclaim_s(r, TARGET_DUTY)
    reclaimed = reclaimed_s(r)
    out.append(target("W5", "every host reclaimed, [fleet] duty 1%, vs device time / budget",
                      f"{seconds(reclaimed)} vs {seconds(expected)} s", f"≤ {RECLAIM_LIMIT}×",
                      None if expected is None else (reclaimed is not None and
                                                     reclaimed <= RECLAIM_LIMIT * expected),
                      f"device time {device_s(r):.2f} s"))
    return out
