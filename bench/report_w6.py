"""The W6 section of the report (the fleet at scale, bench/fleet_sim): what
the simulated hosts saw and what etcd cost, and its targets."""


def f(value, digits=2):
    return "—" if value is None else f"{value:.{digits}f}"


def per_host_kib(w6):
    hwm, base, hosts = w6.get("rss_hwm_kib"), w6.get("rss_baseline_kib"), w6.get("hosts")
    return (hwm - base) / hosts if hwm and base is not None and hosts else None


def away_from_stop(w6, crash):
    """The hand-overs whose slot was freed away from the leader's stop: not
    from a TTL before it (a crashed holder's lease is renewed in full by the
    new leader) to a TTL after it ends. None without the list or a stop."""
    stop, ttl = w6.get("leader_stop", {}), w6.get("lease_ttl_s") or 0
    if "handovers" not in w6 or "at_s" not in stop:
        return None
    begin, end = stop["at_s"] - ttl, stop["at_s"] + stop.get("for_s", 0) + ttl
    latencies = sorted(latency for at, latency, was_crash in w6["handovers"]
                       if was_crash == crash and not begin <= at <= end)
    if not latencies:
        return {"n": 0}
    return {"n": len(latencies), "p99_s": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
            "max_s": latencies[-1]}


def w6_section(w6, charts, small_chunk, latency_ms):
    release, crash = w6.get("handover_release", {}), w6.get("handover_crash", {})
    stop = w6.get("leader_stop", {})
    hosts = w6.get("hosts") or 0
    requests_per_host = w6["requests"] / hosts if hosts and w6.get("requests") is not None else None
    minutes = w6.get("waiting_host_minutes")
    far_per_minute = w6["far_reads"] / minutes if minutes and w6.get("far_reads") is not None else None
    lost_reasons = ", ".join(f"{n} {why.strip()}" for why, n in (w6.get("lost_reasons") or {}).items())
    rows = [
        ("hosts (released / crashed)", f"{hosts} ({w6.get('released')} / {w6.get('crashed')})"),
        ("max_concurrent, lease TTL", f"{w6.get('max_concurrent')}, {f(w6.get('lease_ttl_s'), 0)} s"),
        ("run", f"{f(w6.get('duration_s'), 0)} s, arrivals over {f(w6.get('arrive_over_s'), 0)} s; "
                f"the leader (m{stop.get('member', '?')}) stopped "
                f"{f(stop.get('for_s'), 0)} s from {f(stop.get('at_s'), 0)} s"),
        ("most hosts believing they held a slot at once", str(w6.get("most_believers"))),
        ("etcd samples (every 100 ms) with a believer outside the first max_concurrent claims",
         f"{w6.get('sample_violations')} of {w6.get('samples')}"),
        ("most claims in etcd at once", str(w6.get("most_claims"))),
        ("grants out of arrival order (by more than 1 s)", str(w6.get("out_of_order"))),
        ("hand-over after a release: p50 / p99 / max",
         f"{f(release.get('p50_s'))} / {f(release.get('p99_s'))} / {f(release.get('max_s'))} s "
         f"({release.get('n')})"),
        ("hand-over after a crash: p50 / p99 / max",
         f"{f(crash.get('p50_s'))} / {f(crash.get('p99_s'))} / {f(crash.get('max_s'))} s ({crash.get('n')})"),
        ("... away from the leader's stop (freed outside [stop − TTL, its end + TTL]): "
         "release p99 / max, crash max",
         _away_text(w6)),
        ("etcd requests per host, keep-alives apart (reads, puts, deletes, watches)",
         f"{f(requests_per_host)}; {f(w6.get('requests_per_waiting_host_minute'))} per waiting host "
         f"per minute over {f(w6.get('waiting_host_minutes'), 0)} host-minutes of waiting"),
        ("... of them paced reads of a waiter far from a slot; watches opened",
         f"{w6.get('far_reads', '—')} ({f(far_per_minute)} per waiting host per minute); "
         f"{w6.get('watches', '—')}"),
        ("keep-alives (one per host every TTL/3)", str(w6.get("keepalives"))),
        ("held slots fenced, claims lost, unreachable told",
         f"{w6.get('fences')}, {w6.get('lost')}{f' ({lost_reasons})' if lost_reasons else ''}, "
         f"{w6.get('unreachable')}"),
        ("etcd CPU per member", " / ".join(f"{c:.0f} s" for c in w6.get("etcd_cpu_s", []))),
        ("etcd peak RSS per member",
         " / ".join(f"{(k or 0) / 1024:.0f} MiB" for k in w6.get("etcd_hwm_kib", []))),
        ("simulator memory per host (peak RSS over its baseline / hosts)", f"{f(per_host_kib(w6), 1)} KiB"),
        (f"simulator's loops ({w6.get('loops', 1)}, hosts shared out), most a timer waited "
         f"(keep-alives included)", f"{f(w6.get('loop_lateness_max_s'))} s"),
    ]
    body = "\n".join(f"| {what} | {value} |" for what, value in rows)
    return (f"## W6: the fleet at scale\n\n"
            f"Every simulated host is trimd's coordinator (its own lease, claim, watch and etcd "
            f"client), on one event loop per CPU, against a three-member etcd on loopback; only "
            f"holders and waiters near a slot watch the prefix.\n\n"
            f"| | |\n| --- | --- |\n{body}\n")


def _away_text(w6):
    release, crash = away_from_stop(w6, False), away_from_stop(w6, True)
    if release is None:
        return "—"
    return (f"{f(release.get('p99_s'))} / {f(release.get('max_s'))} s ({release['n']}); "
            f"{f(crash.get('max_s'))} s ({crash['n']})")


def targets(w6, target):
    release, crash = w6.get("handover_release", {}), w6.get("handover_crash", {})
    cap, ttl = w6.get("max_concurrent"), w6.get("lease_ttl_s") or 0
    most = w6.get("most_believers")
    out = [
        target("W6", "hosts believing they held a slot at once", str(most), f"≤ {cap}",
               None if most is None else most <= cap, "every grant and release, as the hosts heard them"),
        target("W6", "etcd samples with a believer outside the first max_concurrent claims",
               str(w6.get("sample_violations")), "0", w6.get("sample_violations") == 0,
               f"{w6.get('samples')} samples, every 100 ms"),
        target("W6", "grants out of arrival order", str(w6.get("out_of_order")), "0",
               w6.get("out_of_order") == 0, "by create revision; news may differ by up to 1 s"),
    ]
    if release.get("n"):
        out.append(target("W6", "hand-over after a release, p99", f"{f(release['p99_s'])} s", "≤ 1 s",
                          release["p99_s"] <= 1.0, f"{release['n']} hand-overs, the leader stop included"))
    if crash.get("n"):
        out.append(target("W6", "hand-over after a crash, max", f"{f(crash['max_s'])} s",
                          f"≤ TTL + 1 s ({ttl + 1:g} s)", crash["max_s"] <= ttl + 1,
                          f"{crash['n']} crashes"))
    return out
