"""The report's PNG charts (matplotlib, headless). draw_all returns, per
section, the file names it wrote; nothing when matplotlib is missing."""
import os

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # the report is still written, without charts
    plt = None

from workloads.w3_idle_throughput import pass_seconds as w3_pass_seconds

MiB = 2**20
COLORS = {"nodiscard": "tab:blue", "discard": "tab:red", "trimd": "tab:green",
          "notrim": "tab:blue", "fstrim": "tab:orange", "trimd-midpass": "tab:purple",
          "trimd-midpass-small": "tab:brown", "trimd-small": "tab:olive", "async": "tab:cyan",
          "takeover": "tab:pink"}


def available():
    return plt is not None


def _save(fig, out_dir, name):
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, name), dpi=90)
    plt.close(fig)
    return name


def _chunk_spans(events, until):
    """(start, end) of each chunk: from its log line to the next event."""
    spans = []
    for i, e in enumerate(events):
        if e["kind"] != "chunk":
            continue
        later = [n["t"] for n in events[i + 1:] if n["kind"] in ("chunk", "pause", "pass_end")]
        spans.append((e["t"], later[0] if later else until))
    return spans


def _mark_trimd(ax, events, t0, until):
    for start, end in _chunk_spans(events, until):
        ax.axvspan(start - t0, end - t0, color="tab:green", alpha=0.15, lw=0)
        ax.axvline(start - t0, color="tab:green", lw=0.8, ls=":")
    for e in events:
        if e["kind"] == "pause":
            ax.axvline(e["t"] - t0, color="tab:red", lw=1.0, ls="--")


def _latency(ax, samples, t0, label, color):
    ax.plot([s[0] - t0 for s in samples], [max(s[1], 1e-3) for s in samples], ".", ms=1.5,
            color=color, label=label)
    ax.set_yscale("log")
    ax.set_ylabel("write+fdatasync ms")


def w1_chart(fs, data, out_dir):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for name, r in data["configs"].items():
        t0, color = r["t0"], COLORS.get(name)
        _latency(top, r["probe_samples"], t0, name, color)
        bottom.plot([t - t0 for t, _ in r["alloc_samples"]], [a / MiB for _, a in r["alloc_samples"]],
                    color=color, label=name)
        if r.get("trimd_events"):
            _mark_trimd(bottom, r["trimd_events"], t0, r["alloc_samples"][-1][0])
    if data.get("reference_alloc"):
        bottom.axhline(data["reference_alloc"] / MiB, color="grey", ls="--", lw=0.8,
                       label="fstrim'd twin")
    if data.get("reference_floor") and data["reference_floor"] < data.get("reference_alloc", 0):
        bottom.axhline(data["reference_floor"] / MiB, color="black", ls=":", lw=0.8,
                       label="same, then fstrim over 64 MiB ranges")
    top.set_title(f"W1 {fs}: probe after rm -r + sync (t = 0 at rm)")
    top.legend(markerscale=6, loc="upper right")
    bottom.set_ylabel("backing file allocation MiB")
    bottom.set_xlabel("seconds since rm started (green: trimd chunks)")
    bottom.legend(loc="upper right")
    return _save(fig, out_dir, f"w1_{fs}.png")


def w2_chart(w2, out_dir):
    configs = w2["configs"]
    fig, axes = plt.subplots(len(configs), 1, figsize=(10, 2.6 * len(configs)), sharex=True,
                             sharey=True, squeeze=False)
    for ax, (name, r) in zip(axes[:, 0], configs.items()):
        t0 = r["probe_start"]
        _latency(ax, r["probe_samples"], t0, name, COLORS.get(name))
        if r.get("fstrim_s") is not None:
            start = r["trim_started_at"] - t0
            ax.axvspan(start, start + r["fstrim_s"], color="tab:orange", alpha=0.2, lw=0,
                       label="fstrim running")
        if r.get("trimd_events"):
            _mark_trimd(ax, r["trimd_events"], t0, r["alloc_samples"][-1][0])
        ax.axvline(r["probe_end"] - t0, color="black", lw=0.8, ls="-.")
        ax.set_title(f"{name}: p99 {r['probe']['write']['p99']:.2f} ms", fontsize=10, loc="left")
    axes[-1, 0].set_xlabel("seconds since the load started (green: trimd chunks, red dashes: "
                           "pauses, dash-dot: load ends)")
    return _save(fig, out_dir, "w2_latency.png")


def w2_reaction_chart(w2, out_dir):
    samples = (w2.get("reaction") or {}).get("samples_ms")
    if not samples:
        return None
    fig, ax = plt.subplots(figsize=(7, 3))
    ax.hist(samples, bins=min(30, max(5, len(samples) // 2)), color="tab:green")
    for limit, label in ((30, "p50 target"), (100, "p99 target")):
        ax.axvline(limit, color="black", lw=0.8, ls="--")
        ax.text(limit, ax.get_ylim()[1] * 0.9, f" {label}", fontsize=8)
    ax.set_xlabel("ms from a foreground write to the FITRIM runner's exit")
    ax.set_ylabel("samples")
    ax.set_title(f"W2 reaction time ({len(samples)} writes into chunks in flight)", fontsize=10)
    return _save(fig, out_dir, "w2_reaction.png")


def w3_chart(w3, out_dir):
    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels, passes, walls = [], [], []
    for fs, data in w3["fs"].items():
        for name, r in data["configs"].items():
            labels.append(f"{fs}\n{name}")
            passes.append(w3_pass_seconds(name, r) or r["run"]["wall_s"])
            walls.append(r["run"]["wall_s"])
    positions = range(len(labels))
    ax.bar([p - 0.2 for p in positions], passes, 0.4, label="pass (trimd: first chunk to end)")
    ax.bar([p + 0.2 for p in positions], walls, 0.4, label="wall", alpha=0.6)
    ax.set_xticks(list(positions), labels)
    ax.set_ylabel("seconds")
    ax.set_title("W3: one full pass on an idle slow-TRIM device")
    ax.legend()
    return _save(fig, out_dir, "w3_pass.png")


def w4_chart(w4, out_dir):
    samples = w4["idle"]["samples"]
    t0 = samples[0]["t"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    ts = [s["t"] - t0 for s in samples]
    top.plot(ts, [(s["rss_kib"] or 0) / 1024 for s in samples], label="VmRSS")
    top.plot(ts, [(s["hwm_kib"] or 0) / 1024 for s in samples], label="VmHWM", ls="--")
    top.axhline(10, color="red", lw=0.8, ls=":", label="target 10 MiB")
    top.set_ylabel("MiB")
    top.legend()
    top.set_title(f"W4: trimd idle with {w4['count']} filesystems")
    bottom.plot(ts, [s["cpu_s"] - samples[0]["cpu_s"] for s in samples], label="utime+stime")
    bottom.plot(ts, [t * 0.002 for t in ts], color="red", lw=0.8, ls=":", label="0.2% of a core")
    bottom.set_ylabel("CPU s since start")
    bottom.set_xlabel("seconds")
    bottom.legend()
    return _save(fig, out_dir, "w4_footprint.png")


def draw_all(results, out_dir):
    if plt is None:
        return {}
    w = results.get("workloads", {})
    charts = {}
    for fs, data in w.get("W1", {}).get("fs", {}).items():
        charts[f"W1-{fs}"] = [w1_chart(fs, data, out_dir)]
    if w.get("W2", {}).get("configs"):
        charts["W2"] = [c for c in (w2_chart(w["W2"], out_dir), w2_reaction_chart(w["W2"], out_dir))
                        if c]
    if w.get("W3", {}).get("fs"):
        charts["W3"] = [w3_chart(w["W3"], out_dir)]
    if w.get("W4", {}).get("idle"):
        charts["W4"] = [w4_chart(w["W4"], out_dir)]
    return charts
