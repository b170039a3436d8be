"""Running trimd for the benchmark: its policy file, the daemon and --once,
its log, read by MESSAGE_ID and fields (--log-format=json), and its footprint
in /proc."""
import contextlib
import json
import os
import re

from . import blkio
from .guard import TRIMD_NICE, HarnessError, run, run_measured, spawn, stop, wait_until
from .message_ids import message_ids

CLK_TCK = os.sysconf("SC_CLK_TCK")

# The events the bench reads, by their names in lib/base/event_ids.def: the
# log is read by MESSAGE_ID and the fields of --log-format=json, never by
# its wording.
_KINDS = {
    "DaemonStarted": "started",
    "PassStarted": "pass_start",
    "ChunkStarted": "chunk",
    "PassPaused": "pause",
    "PassFinished": "pass_end",
    "PassFailed": "pass_end",
    "RunnerKilled": "runner_killed",
    "FleetSlotAcquired": "slot_acquired",
    "FleetSlotReleased": "slot_released",
}
_IDS = message_ids()
EVENTS = {_IDS[name]: kind for name, kind in _KINDS.items()}


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
    return TRIMD_NICE + [binary, "--no-bus", "--foreground", "--log-level", "debug",
                         "--log-format", "json", "--config", config, "--state-dir", state_dir]


def check_config(binary, config):
    run([binary, "--check-config", "--config", config])


@contextlib.contextmanager
def daemon(binary, config, state_dir, log_path, cgroup=None):
    """trimd as a daemon (no --once), stopped with SIGTERM on the way out;
    `cgroup`: in that blkio cgroup (lib/blkio.py), its runners with it."""
    proc = spawn(blkio.inside(cgroup, base_args(binary, config, state_dir)), log_path=log_path)
    try:
        wait_until(lambda: started(log_path) or proc.poll() is not None, 20,
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


def entries(path):
    """The JSON lines of trimd's log, each a dict of its fields; lines that
    are not JSON (a crash message) are left out."""
    out = []
    for raw in _read(path).splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(raw)
            if isinstance(entry, dict):
                out.append(entry)
    return out


def _event(entry):
    """One log entry as the benchmark's event dict, or None."""
    kind = EVENTS.get(entry.get("MESSAGE_ID"))
    if kind is None:
        return None
    e = {"t": int(entry["__REALTIME_TIMESTAMP"]) / 1e6, "kind": kind,
         "mount": entry.get("MOUNT_POINT")}
    if kind == "started":
        e["filesystems"] = int(entry["FILESYSTEMS"])
    elif kind == "chunk":
        e.update(n=int(entry["CHUNK"]), offset=int(entry["OFFSET"]), length=int(entry["LENGTH"]))
    elif kind == "pass_end":
        e.update(result=entry["RESULT"].split(":")[0], bytes=int(entry["BYTES"]),
                 reported=int(entry["REPORTED_BYTES"]),
                 duration_s=int(entry["DURATION_USEC"]) / 1e6, chunks=int(entry["CHUNKS"]),
                 pauses=int(entry["PAUSES"]), message=entry.get("MESSAGE", ""))
    elif kind == "runner_killed":
        e.update(disk=entry["DISK"], reason=entry["REASON"],
                 foreground_bytes=int(entry["FOREGROUND_BYTES"]), start=int(entry["OFFSET"]),
                 len=int(entry["LENGTH"]), discarded=int(entry["REDONE_BYTES"]),
                 killed_at_us=int(entry["KILLED_AT_USEC"]),
                 exited_at_us=int(entry["EXITED_AT_USEC"]))
    return e


def parse_log(path):
    """trimd's events, in order, each with its wall time: started,
    pass_start, chunk, pause (for foreground I/O), pass_end, runner_killed."""
    return [e for e in map(_event, entries(path)) if e is not None]


def started(path):
    return any(e["kind"] == "started" for e in parse_log(path))


def tracked_count(path):
    """How many filesystems trimd said it tracks when it started."""
    found = [e["filesystems"] for e in parse_log(path) if e["kind"] == "started"]
    return found[0] if found else None


def preemptions(path):
    """The chunks trimd killed for foreground I/O, in order: disk, reason,
    foreground_bytes, start, len, discarded (what the redo sends again),
    killed_at_us, exited_at_us."""
    return [e for e in parse_log(path) if e["kind"] == "runner_killed"]


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


def reported_bytes(events, mount):
    """What FITRIM reported over the last pass on `mount`."""
    end = pass_summary(events, mount).get("logged")
    return end["reported"] if end else None


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
