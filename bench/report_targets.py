"""The targets from the issue, judged on a run's results.

Each target is a dict: workload, what, value (text), limit (text), met
(True, False, "noise" when the interval of a repeated ratio straddles the
limit, or None when the run could not measure it), why (a note).
"""

import statistics

from lib import ratios
from workloads.w3_idle_throughput import fstrim_left_extents
from workloads.w3_idle_throughput import pass_seconds as w3_pass_seconds

ALLOC_TOLERANCE = 0.01  # "trimd reclaims as much as fstrim": allocation within 1%
W1_RM_SYNC_LIMIT = 1.10
W2_P99_LIMIT = 1.25
# Reaction time, first foreground I/O to the FITRIM runner's exit, in ms.
W2_REACTION_P50_MS = 30.0
W2_REACTION_P99_MS = 100.0
W3_PASS_LIMIT = 1.10
DISCARDS_LIMIT = 1.02  # discards trimd sends, against fstrim's on a twin
SECOND_PASS_LIMIT = 0.01  # a second pass right after the first: its share of the first's
W4_RSS_LIMIT_KIB = 10 * 1024
W4_CPU_LIMIT_PERCENT = 0.2


def ratio(value, base):
    if value is None or base is None or base == 0:
        return None
    return value / base


def target(workload, what, value, limit, met, why=""):
    return {"workload": workload, "what": what, "value": value, "limit": limit, "met": met,
            "why": why}


def x(r):
    return "—" if r is None else f"{r:.2f}×"


def alloc_target(workload, what, alloc, reference):
    r = ratio(alloc, reference)
    off = None if r is None else r - 1
    met = None if off is None else off <= ALLOC_TOLERANCE
    value = "—" if off is None else f"{off * 100:+.2f}% ({alloc / 2**20:.1f} vs {reference / 2**20:.1f} MiB)"
    return target(workload, what, value, "≤ +1%", met)


def w1_targets(w1, params):
    out = []
    for fs, data in w1.get("fs", {}).items():
        configs = data["configs"]
        base, tr = configs.get("nodiscard"), configs.get("trimd")
        if not base or not tr:
            continue
        r, value, why = rm_sync_ratio(tr, base)
        out.append(target("W1", f"{fs}: rm + sync with trimd vs no discard", value,
                          f"≤ {W1_RM_SYNC_LIMIT:.2f}×", rm_sync_verdict(tr, base, r), why))
        out.append(w1_reclaim_target(fs, tr, params))
        out.append(w1_alloc_target(fs, tr, data))
        out.append(discards_target("W1", fs, tr.get("sent"), data.get("fstrim_discards"),
                                   "fstrim on a fresh mount of the fstrim'd twin, + fstrim over "
                                   "64 MiB ranges where one call left free extents"))
        if configs.get("async"):
            out.append(w1_async_target(fs, tr, configs["async"], data["written"]["del"]))
    return out


ASYNC_STORM_SHARE = 0.9  # "the storm's space back": this share of what it freed


def storm_space_back_s(config, freed):
    """Seconds from the start of rm until the allocation first fell by
    ASYNC_STORM_SHARE of what the storm freed below its highest point so far
    (the probe's writes keep allocating: a level fixed before the storm
    would hold a peer that discards later to more), or None."""
    peak = None
    for t, allocated in config.get("alloc_samples", []):
        if t < config["t0"]:
            continue
        peak = allocated if peak is None else max(peak, allocated)
        if allocated <= peak - ASYNC_STORM_SHARE * freed:
            return t - config["t0"]
    return None


def w1_async_target(fs, tr, peer, freed):
    """btrfs discard=async, the kernel's own background discarder: when most
    of the storm's freed space is back in the device (from the start of rm),
    beside trimd. async discards only what was freed while mounted, so the
    fstrim'd twin's level is not its target; trimd's full reclaim is in the note."""
    t, a = storm_space_back_s(tr, freed), storm_space_back_s(peer, freed)
    sent = (peer.get("sent") or {}).get("discards"), (tr.get("sent") or {}).get("discards")
    p99 = peer["probe"]["write"].get("p99"), tr["probe"]["write"].get("p99")
    value = (f"trimd {'—' if t is None else f'{t:.0f} s'} vs async "
             f"{'not within the run' if a is None else f'{a:.0f} s'}")
    full = tr.get("reclaim_s")
    why = (f"{ASYNC_STORM_SHARE:.0%} of the storm's {freed / 2**20:.0f} MiB; probe write p99 "
           f"async {p99[0]:.2f} vs trimd {p99[1]:.2f} ms; discards {sent[0]} vs {sent[1]}; "
           f"trimd back to fstrim's level {'—' if full is None else f'{full:.0f} s'}; async "
           "waits 120 s after a block group's last change, and skips free extents under 32 KiB "
           "in a group in use")
    met = None if t is None else (a is None or t <= a)
    return target("W1", f"{fs}: the storm's freed space back in the device, trimd vs "
                  "`discard=async`", value, "trimd no later", met, why)


def discards_target(workload, fs, sent, fstrim_discards, why=""):
    """Discard requests the device got from trimd's pass (its diskstats)
    against fstrim's: every discard repeated is device time, and wear."""
    count = sent and sent["discards"]
    r = ratio(count, fstrim_discards)
    value = "—" if r is None else f"{x(r)} ({count} vs {fstrim_discards})"
    return target(workload, f"{fs}: discards issued by trimd vs fstrim", value,
                  f"≤ {DISCARDS_LIMIT:.2f}×", None if r is None else r <= DISCARDS_LIMIT, why)


def w3_fstrim_discards(configs):
    """fstrim's discards on a twin, and which fstrim: over 64 MiB ranges
    where one call left free extents for them (xfs): trimd's chunks reach
    those too, and must send each no more than once."""
    f, stepped = configs["fstrim"], configs.get("fstrim-stepped")
    if fstrim_left_extents(configs) and stepped and stepped.get("sent"):
        return stepped["sent"]["discards"], "fstrim over 64 MiB ranges on a twin: one fstrim " \
            "call left free extents"
    return (f.get("sent") or {}).get("discards"), "fstrim on a twin, idle"


def second_pass_target(fs, config, fstrim):
    """A second pass right after the first sends next to nothing where the
    filesystem remembers what it trimmed; fstrim's own share is the note."""
    first, second = config.get("sent"), config.get("second")
    share = ratio(second and second["discards"], first and first["discards"])
    value = ("—" if share is None else
             f"{100 * share:.2f}% ({second['discards']} of {first['discards']})")
    f_first, f_second = (fstrim or {}).get("sent"), (fstrim or {}).get("second")
    f_share = ratio(f_second and f_second["discards"], f_first and f_first["discards"])
    why = "" if f_share is None else (f"fstrim's second run: {100 * f_share:.2f}% "
                                      f"({f_second['discards']} of {f_first['discards']})")
    limit, limit_text = SECOND_PASS_LIMIT, f"≤ {100 * SECOND_PASS_LIMIT:g}% of the first"
    if f_share is not None and f_share > SECOND_PASS_LIMIT:
        # FITRIM on xfs and btrfs skips nothing it trimmed before: fstrim's second
        # run sends it all again, and that is what trimd's is held to.
        limit = f_share * DISCARDS_LIMIT
        limit_text = f"≤ fstrim's second run ({100 * f_share:.2f}%) × {DISCARDS_LIMIT:.2f}"
        why += "; FITRIM on this filesystem does not skip what it trimmed before"
    return target("W3", f"{fs}: trimd's second pass right after the first, discards",
                  value, limit_text, None if share is None else share <= limit, why)


def w1_takeover_targets(w1, params):
    """The fourth W1 configuration: mounted with discard, taken over by trimd."""
    out = []
    for fs, data in w1.get("fs", {}).items():
        base, tk = data["configs"].get("nodiscard"), data["configs"].get("takeover")
        if not base or not tk:
            continue
        r, value, why = rm_sync_ratio(tk, base)
        out.append(target("W1", f"{fs}: rm + sync mounted with discard, taken over by trimd, vs "
                          "no discard", value,
                          f"≤ {W1_RM_SYNC_LIMIT:.2f}×", rm_sync_verdict(tk, base, r),
                          why + "; superblock options " + " → ".join(
                              ",".join(tk.get("mount_options", {}).get(k, []))
                              for k in ("before", "after"))))
        out.append(w1_reclaim_target(f"{fs} taken over", tk, params))
    return out


def w1_alloc_target(fs, config, data):
    """Against the fstrim'd twin; on btrfs, an fstrim on trimd's own mount
    right after its pass or, from runs before that, a twin fstrim'd on a
    mount in use (what FITRIM can reach there, see
    bench/workloads/w1_delete_storm.py)."""
    in_use = data.get("reference_in_use")
    same = config.get("same_mount_fstrim")
    if same is not None:
        t = alloc_target("W1", f"{fs}: allocation after trimd's pass vs an fstrim on its mount "
                         "right after it", same["before"], same["after"])
        t["why"] = (f"that fstrim sent {same['discards']} discards"
                    + ("" if in_use is None else
                       f"; a twin fstrim'd on a mount in use reached {in_use / 2**20:.1f} MiB "
                       "(it moves from mount to mount)"))
        return t
    if in_use is not None:
        return alloc_target("W1", f"{fs}: allocation after trimd vs twin fstrim'd on a mount in use",
                            config["alloc_end"], in_use)
    return alloc_target("W1", f"{fs}: allocation after trimd vs fstrim'd twin",
                        config["alloc_end"], data.get("reference_alloc"))


def rm_sync(config):
    """The median over the repeated timings, when there are any."""
    return config.get("rm_sync_median", config["rm_sync_s"])


def paired_trials(config, base):
    """The rm + sync ratios trial by trial, when both ran repeated twins."""
    trials, base_trials = config.get("rm_sync_trials", []), base.get("rm_sync_trials", [])
    if len(trials) > 1 and len(trials) == len(base_trials) and all(base_trials):
        return ratios.paired(trials, base_trials)
    return None


def rm_sync_verdict(config, base, r):
    """Met, missed or noise by the paired ratios' interval; one twin each
    can only be compared as it is."""
    paired = paired_trials(config, base)
    if paired:
        _, low, high = ratios.median_interval(paired)
        return ratios.judge(low, high, W1_RM_SYNC_LIMIT)
    return None if r is None else r <= W1_RM_SYNC_LIMIT


def rm_sync_ratio(config, base):
    """rm + sync of `config` against no discard: with repeated twins, the
    median of the ratios trial by trial (trial i of each ran back to back,
    so a burst of other load hits both alike; one rm + sync varies by up
    to 1.4x twin to twin here), with its bootstrap 95% interval. Returns
    (ratio, value text, note)."""
    t, b = rm_sync(config), rm_sync(base)
    paired = paired_trials(config, base)
    if paired:
        r, low, high = ratios.median_interval(paired)
        return r, f"{x(r)} [{low:.2f}–{high:.2f}] (medians {t:.2f} vs {b:.2f} s)", \
            f"median of {len(paired)} ratios, twin by twin, 95% interval"
    r = ratio(t, b)
    return r, f"{x(r)} ({t:.2f} vs {b:.2f} s)", "one twin each"


def w1_reclaim_target(fs, tr, params):
    """Reclaimed no later than: the load's end + the idle window + sampling
    slack + the time one pass (first chunk to end) took."""
    p = tr.get("trimd_pass") or {}
    active = p.get("active_s")
    what = f"{fs}: freed space reclaimed within idle window + one pass"
    if tr.get("reclaimed_at") is None:
        return target("W1", what, "not reclaimed before the bench gave up", "reclaimed", False,
                      f"{p.get('chunks', 0)} chunks ran, last result {p.get('result')}")
    # From the disk's last busy second: the filesystem's own writes after
    # the load (btrfs commits every 30 s) restart trimd's idle window.
    quiet = tr.get("disk_quiet_at") or tr["probe_end"]
    after = max(0.0, tr["reclaimed_at"] - quiet)
    allowed = params["idle_window_s"] + 2 * params["sample_interval_s"] + (active or 0) + 1.0
    late = quiet - tr["probe_end"]
    since = "the disk went idle" if tr.get("disk_quiet_at") else "the load stopped"
    return target("W1", what, f"{after:.1f} s after {since}"
                  + (f" ({late:.1f} s after the load stopped)" if late >= 0.5 else ""),
                  f"≤ {allowed:.1f} s (window {params['idle_window_s']:.0f} s + pass "
                  f"{active or 0:.1f} s + sampling)", after <= allowed,
                  "to the level an fstrim on trimd's own mount reached right after its pass"
                  if tr.get("same_mount_fstrim") else "")


def w2_targets(w2):
    out = []
    configs = w2.get("configs", {})
    base = configs.get("notrim")
    if not base:
        return out
    rounds = w2.get("p99_rounds", {})
    for name, label in (("trimd", "trimd"), ("trimd-midpass", "trimd, load arriving mid-pass"),
                        ("trimd-midpass-small", "small chunks, load arriving mid-pass")):
        c = configs.get(name)
        if not c:
            continue
        why = ("" if name == "trimd" else "the worst case: a chunk in the kernel when the load arrives"
               + (", a policy experiment" if name.endswith("-small") else ""))
        paired = ratios.paired(rounds.get(name, []), rounds.get("notrim", []))
        if len(paired) > 1:
            r, low, high = ratios.median_interval(paired)
            out.append(target("W2", f"probe p99 with {label} vs no trim",
                              f"{x(r)} [{low:.2f}–{high:.2f}]", f"≤ {W2_P99_LIMIT:.2f}×",
                              ratios.judge(low, high, W2_P99_LIMIT),
                              "; ".join(filter(None, [f"median of {len(paired)} rounds, "
                                                      "each beside its no-trim run", why]))))
            continue
        r = ratio(c["probe"]["write"]["p99"], base["probe"]["write"]["p99"])
        out.append(target("W2", f"probe p99 with {label} vs no trim",
                          f"{x(r)} ({c['probe']['write']['p99']:.2f} vs "
                          f"{base['probe']['write']['p99']:.2f} ms)",
                          f"≤ {W2_P99_LIMIT:.2f}×", None if r is None else r <= W2_P99_LIMIT, why))
    out += w2_reaction_targets(w2.get("reaction"))
    if "trimd" in configs and w2.get("reference_alloc"):
        out.append(alloc_target("W2", "allocation after trimd vs fstrim", configs["trimd"]["alloc_end"],
                                w2["reference_alloc"]))
    return out


def percentile(values, q):
    """Nearest-rank percentile, q in [0, 100]."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, -(-int(q * len(ordered)) // 100)) - 1]


def w2_reaction_targets(reaction):
    if not reaction:
        return []
    samples = reaction.get("samples_ms", [])
    out = []
    for q, limit in ((50, W2_REACTION_P50_MS), (99, W2_REACTION_P99_MS)):
        v = percentile(samples, q)
        why = "" if v is not None else reaction.get(
            "error", f"no write landed in a chunk in {reaction.get('passes', 1)} passes")
        out.append(target("W2", f"reaction time p{q}: foreground write to runner exit",
                          "—" if v is None else f"{v:.1f} ms ({len(samples)} samples)",
                          f"≤ {limit:.0f} ms", None if v is None else v <= limit, why))
    return out


def w3_pass_ratio(data):
    """trimd's pass time against the fstrim doing the same work: over the
    paired rounds, the median of the ratios with its interval; one round
    is compared as it is. Returns (ratio, met, value text, note)."""
    rounds = [r for r in data.get("rounds", []) if r.get("trimd") and r.get("baseline")]
    walls = f"wall {data['configs']['trimd']['run']['wall_s']:.1f} s with the idle wait"
    if len(rounds) > 1:
        trimd_s, base_s = [r["trimd"] for r in rounds], [r["baseline"] for r in rounds]
        r, low, high = ratios.median_interval(ratios.paired(trimd_s, base_s))
        return r, ratios.judge(low, high, W3_PASS_LIMIT), \
            f"{x(r)} [{low:.2f}–{high:.2f}] (medians {statistics.median(trimd_s):.1f} vs " \
            f"{statistics.median(base_s):.1f} s; {walls})", \
            f"median of {len(rounds)} paired rounds, 95% interval"
    baseline = data.get("time_baseline", "fstrim")
    active = w3_pass_seconds("trimd", data["configs"]["trimd"])
    base = w3_pass_seconds(baseline, data["configs"][baseline])
    r = ratio(active, base)
    return r, None if r is None else r <= W3_PASS_LIMIT, \
        f"{x(r)} ({active or 0:.1f} vs {base:.1f} s; {walls})", "one pass each"


W3_BASELINE_WHAT = {"fstrim": "fstrim",
                    "fstrim-stepped": "fstrim over 64 MiB ranges (one fstrim call skips free "
                                      "extents that trimd's chunks trim)"}


def w3_targets(w3):
    out = []
    for fs, data in w3.get("fs", {}).items():
        f, t = data["configs"].get("fstrim"), data["configs"].get("trimd")
        if not f or not t:
            continue
        _, met, value, why = w3_pass_ratio(data)
        baseline = W3_BASELINE_WHAT[data.get("time_baseline", "fstrim")]
        out.append(target("W3", f"{fs}: trimd pass vs {baseline}, idle", value,
                          f"≤ {W3_PASS_LIMIT:.2f}×", met, why))
        out.append(alloc_target("W3", f"{fs}: allocation after trimd vs fstrim", t["alloc_end"],
                                f["alloc_end"]))
        out.append(discards_target("W3", fs, t.get("sent"), *w3_fstrim_discards(data["configs"])))
        out.append(second_pass_target(fs, t, f))
    return out


def w4_targets(w4):
    out = []
    idle = w4.get("idle")
    if idle:
        rss = max(idle["rss_max_kib"], idle["hwm_kib"] or 0)
        out.append(target("W4", f"RSS with {w4['count']} filesystems (max of VmRSS, VmHWM)",
                          f"{rss / 1024:.1f} MiB", "≤ 10 MiB", rss <= W4_RSS_LIMIT_KIB))
        cpu = idle["cpu_percent"]
        out.append(target("W4", f"idle CPU over {idle['seconds']:.0f} s",
                          f"{cpu:.3f}% of a core ({idle['cpu_s']:.2f} s)",
                          f"≤ {W4_CPU_LIMIT_PERCENT}%", cpu <= W4_CPU_LIMIT_PERCENT))
    p = w4.get("pass")
    if p:
        out.append(alloc_target("W4", "allocation after trimd's pass vs after fstrim",
                                p["alloc_after_trimd"], p["alloc_after_fstrim"]))
    return out


def all_targets(results):
    w = results.get("workloads", {})
    out = []
    if "W1" in w:
        out += w1_targets(w["W1"], results["params"])
        out += w1_takeover_targets(w["W1"], results["params"])
    if "W2" in w:
        out += w2_targets(w["W2"])
    if "W3" in w:
        out += w3_targets(w["W3"])
    if "W4" in w:
        out += w4_targets(w["W4"])
    return out
