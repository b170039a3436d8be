"""The report's header: when, on what, with which build and settings, in
how many sittings."""
import datetime
import os
import platform

from lib import sittings


def stamp(epoch):
    return datetime.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M")


def header(results):
    p = results["params"]
    when = stamp(results["started"])
    took = (results["finished"] - results["started"]) / 60
    kind = ("quick smoke run: tiny sizes, the numbers say nothing about trimd"
            if results["quick"] else "full run")
    parts = sittings.describe(results)
    if parts:
        took = sum(minutes for _, _, minutes in parts)
        kind += (f" in {len(parts)} sittings with the same build and settings ("
                 + "; ".join(f"{', '.join(names)} at {stamp(run)}, {minutes:.1f} min"
                             for run, names, minutes in parts) + ")"
                 + "".join(f"; {r['workload']} of {stamp(r['run'])} run again and replaced"
                           for r in results.get("replaced", [])))
    out = [f"# trimd benchmark, {when}\n",
           f"{kind}; {took:.1f} min on {platform.node()} (kernel {platform.release()}, "
           f"{os.cpu_count()} CPUs).\n",
           f"Slow-TRIM device: slowtrim's {p.get('device_model', 'exclusive')} model, "
           f"{p['latency_ms']:g} ms per discard + {p['per_mib_ms']:g} ms per MiB, "
           + {"exclusive": "no other I/O meanwhile",
              "queued": f"sharing a queue of {p.get('queue_depth', 32)} with other I/O",
              "thin": "a thin-provisioned backend"}.get(p.get("device_model", "exclusive"), "")
           + "; a loop device on it; backing "
           "files on tmpfs. Every configuration runs on its own `cp --sparse=always` twin of one "
           "template, mounted alone.\n",
           f"trimd: its compiled-in policy except `first_delay = \"0s\"`, "
           f"`randomized_delay = \"0s\"`, idle window {p['idle_window']} (daemon runs) or "
           f"{p['once_idle_window']} (`--once` runs: the disk is idle anyway), sample interval "
           f"{p['sample_interval']}, only the benchmark's filesystems enabled"
           + (", and `--set` " + ", ".join(f"`{k}={v}`" for k, v in results["overrides"])
              if results["overrides"] else "") + ". It runs at nice 10 as in trimd.service; "
           "slowtrim and the probe at nice -10, so that other load on the machine blurs less.\n",
           "Probe: every 10 ms a 4 KiB write + fdatasync and a 4 KiB O_DIRECT random read on a "
           "64 MiB file in the filesystem under test; latencies are p50 / p99 / max in ms "
           "(the write is the target's \"probe\").\n"]
    build = results.get("build")
    if build:
        harness = build["harness"]
        out.append(f"Build: trimd {build['trimd']}, slowtrim {build['slowtrim']} (SHA-256, first "
                   f"16 hex digits); bench/ at {(harness['commit'] or 'unknown')[:12]}"
                   + (" with uncommitted changes" if harness["dirty"] else "") + ".\n")
    loads = results.get("load", {})
    if loads:
        out.append("Load average (1 min) of this shared machine at the start and end of each "
                   "workload: " + ", ".join(f"{w} {a[0]:.1f} → {b[0]:.1f}" for w, (a, b) in
                                            loads.items()) + ".\n")
    return "\n".join(out)
