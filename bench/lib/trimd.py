"""Running trimd for the benchmark: its policy file, the daemon and --once,
its debug log (chunks, pauses, passes) and its footprint in /proc."""
import contextlib
import datetime
import json
import os
import re

from .guard import TRIMD_NICE, HarnessError, run, run_measured, spawn, stop, wait_until

CLK_TCK = os.sysconf("SC_CLK_TCK")

LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) (\w+): (.*)$")
CHUNK = re.compile(r"^(?P<mnt>.+): chunk (?P<n>\d+) at offset (?P<off>\d+) length (?P<len>\d+)")
PAUSE = re.compile(r"^(?P<mnt>.+): foreground I/O, pausing the pass")
PASS_START = re.compile(r"^(?P<mnt>.+): trim pass starting")
PASS_END = re.compile(
    r"^(?P<mnt>.+): trim pass (?P<result>\w+)(?::[^:]*)?: (?P<discarded>.+?) discarded "
    r"\(FITRIM reported (?P<reported>.+?)\) in (?P<duration>.+?), (?P<chunks>\d+) chunks, "
    r"(?P<pauses>\d+) pauses")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _toml_value(text):
    if re.fullmatch(r"-?\d+(\.\d+)?|true|false", text) or text.startswith('"'):
        return text
    return '"' + text.replace('"', '\\"') + '"'


def write_config(path, mount_glob, idle_window, sample_interval, first_delay="0s",
                 overrides=()):
    """trimd's compiled-in policy, except: due at once (or after
    `first_delay`), the given idle window, and only the benchmark's own
    filesystems enabled: other mounts on this machine are left alone.
    `overrides` are ("section.key", "value") pairs from --set."""
    sections = {"idle": {"window": f'"{idle_window}"', "sample_interval": f'"{sample_interval}"'},
                "trim": {"first_delay": f'"{first_delay}"', "randomized_delay": '"0s"'}}
    for dotted, value in overrides:
        section, key = dotted.split(".", 1)
        sections.setdefault(section, {})[key] = _toml_value(value)
    lines = []
    for section, keys in sections.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {v}" for k, v in keys.items()]
        lines.append("")
    lines += ['[[filesystem]]', 'match = "*"', "enabled = false", "",
              "[[filesystem]]", f'match = "{mount_glob}"', "enabled = true", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def base_args(binary, config, state_dir):
    os.makedirs(state_dir, exist_ok=True)
    return TRIMD_NICE + [binary, "--no-bus", "--foreground", "--log-level", "debug", "--config", config,
            "--state-dir", state_dir]


def check_config(binary, config):
    run([binary, "--check-config", "--config", config])


@contextlib.contextmanager
def daemon(binary, config, state_dir, log_path):
    """trimd as a daemon (no --once), stopped with SIGTERM on the way out."""
    proc = spawn(base_args(binary, config, state_dir), log_path=log_path)
    try:
        wait_until(lambda: "trimd started" in _read(log_path) or proc.poll() is not None, 20,
                   what="trimd to start")
        if proc.poll() is not None:
            raise HarnessError(f"trimd exited ({proc.returncode}); see {log_path}")
        yield proc
    finally:
        stop(proc, grace=30.0, hard_grace=600.0)


def run_once(binary, config, state_dir, log_path, mount_points, timeout):
    """trimd --once over `mount_points`: exit status, wall and CPU seconds,
    and the peak of VmHWM seen while it ran."""
    peak = {"hwm_kib": 0}

    def sample(pid):
        peak["hwm_kib"] = max(peak["hwm_kib"], status_kib(pid).get("VmHWM", 0))

    out = run_measured(base_args(binary, config, state_dir) + ["--once"] + list(mount_points),
                       log_path, timeout, on_tick=sample)
    out.update(peak)
    return out


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def _when(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f").timestamp()


def parse_log(path):
    """The events of a debug log, each with its wall time: trimd started,
    pass start, chunk, pause for foreground I/O, pass end."""
    events = []
    for raw in _read(path).splitlines():
        m = LINE.match(ANSI.sub("", raw))
        if not m:
            continue
        t, text = _when(m.group(1)), m.group(3)
        if text.startswith("trimd started"):
            events.append({"t": t, "kind": "started"})
        elif c := CHUNK.match(text):
            events.append({"t": t, "kind": "chunk", "mount": c["mnt"], "n": int(c["n"]),
                           "offset": int(c["off"]), "length": int(c["len"])})
        elif p := PAUSE.match(text):
            events.append({"t": t, "kind": "pause", "mount": p["mnt"]})
        elif s := PASS_START.match(text):
            events.append({"t": t, "kind": "pass_start", "mount": s["mnt"]})
        elif e := PASS_END.match(text):
            events.append({"t": t, "kind": "pass_end", "mount": e["mnt"], "result": e["result"],
                           "discarded": e["discarded"], "reported": e["reported"],
                           "duration": e["duration"], "chunks": int(e["chunks"]),
                           "pauses": int(e["pauses"])})
    return events


PREEMPTED = re.compile(r": preempted (\{.*\})\s*$")


def preemptions(path):
    """trimd's structured preemption records (one JSON object per chunk it
    killed for foreground I/O: disk, reason, chunk, killed_at_us,
    exited_at_us), in order."""
    out = []
    for raw in _read(path).splitlines():
        m = PREEMPTED.search(ANSI.sub("", raw))
        if m:
            with contextlib.suppress(ValueError):
                out.append(json.loads(m.group(1)))
    return out


def pass_ended(log_path):
    return any(e["kind"] == "pass_end" for e in parse_log(log_path))


def pass_summary(events, mount=None):
    """First chunk to pass end (the time spent trimming, not waiting for an
    idle disk), the chunks and the pauses of the last pass over `mount`."""
    mine = [e for e in events if mount is None or e.get("mount") == mount]
    chunks = [e for e in mine if e["kind"] == "chunk"]
    ends = [e for e in mine if e["kind"] == "pass_end"]
    out = {"chunks": len(chunks), "pauses": sum(1 for e in mine if e["kind"] == "pause"),
           "first_chunk_t": chunks[0]["t"] if chunks else None,
           "end_t": ends[-1]["t"] if ends else None,
           "result": ends[-1]["result"] if ends else None,
           "logged": ends[-1] if ends else None}
    if chunks and ends:
        out["active_s"] = ends[-1]["t"] - chunks[0]["t"]
    return out


UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def parse_size(text):
    """trimd's "1.8 GiB" (one decimal) back to bytes, roughly."""
    m = re.fullmatch(r"([\d.]+) ?([KMGT]iB|B)", (text or "").strip())
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def reported_bytes(events, mount):
    end = pass_summary(events, mount).get("logged")
    return parse_size(end["reported"]) if end else None


def status_kib(pid):
    """VmRSS, VmHWM, ... of /proc/PID/status, in KiB."""
    out = {}
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key.startswith("Vm") and rest.strip().endswith("kB"):
                    out[key] = int(rest.split()[0])
    return out


def cpu_seconds(pid):
    """utime + stime of /proc/PID/stat (fields 14 and 15), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK
