"""One report from several sittings: `bench/run --add --out DIR` adds this
run's workloads to DIR/results.json.

A full run (every workload, full size) takes longer than a quiet stretch of
a shared machine lasts. Split into sittings, it is still one report as long
as every sitting measured the same thing: the same trimd and slowtrim
binaries, the same harness, the same sizes and policy. `merge` refuses
anything else, so a report never mixes builds or settings. A workload run
again replaces its earlier sitting, and the report says so."""
import hashlib
import json
import os
import subprocess

# What has to be equal for two sittings to be one run.
IDENTITY = ("quick", "params", "overrides", "build")


class Mismatch(Exception):
    """The sittings measured different things: not one run."""


def file_digest(path):
    """The first 16 hex digits of a file's SHA-256, None if it is missing."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return None


def harness_version(bench_dir):
    """The last commit that changed bench/'s code, and whether it has
    changes not committed (then no one can vouch for two sittings being
    alike)."""
    def git(*args):  # only reads: a checkout owned by another user is fine
        return subprocess.run(["git", "-c", "safe.directory=*", "-C", bench_dir, *args],
                              capture_output=True, text=True, check=True).stdout.strip()
    code = ["--", ".", ":(exclude)*.md"]  # a note in bench/README.md changes no number
    try:
        commit = git("log", "-1", "--format=%H", *code)
        dirty = bool(git("status", "--porcelain", *code))
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}  # not a git checkout
    return {"commit": commit or None, "dirty": dirty}


def build_identity(build_dir, bench_dir):
    return {"trimd": file_digest(os.path.join(build_dir, "daemon", "trimd")),
            "slowtrim": file_digest(os.path.join(build_dir, "bench", "slowtrim")),
            "harness": harness_version(bench_dir)}


def _canonical(value):
    """Tuples become lists in results.json: compare what JSON keeps."""
    return json.loads(json.dumps(value))


def differences(old, new):
    """The identity fields in which two sittings differ, by name."""
    return [key for key in IDENTITY if _canonical(old.get(key)) != _canonical(new.get(key))]


def sitting_of(results, workload):
    """When a workload ran: its own sitting, or the whole run's for a
    results.json written before sittings were kept."""
    return results.get("sittings", {}).get(workload) or {
        "run": results["started"], "started": results["started"],
        "finished": results["finished"]}


def check(old, new):
    """Raises Mismatch unless `new` (results, or just their IDENTITY
    fields) measured what `old` did."""
    for side in (old, new):
        if (side.get("build") or {}).get("harness", {}).get("dirty") is not False:
            raise Mismatch("bench/ had uncommitted changes (or was not a git checkout) in one "
                           "of the sittings: commit them, then run every sitting")
    differ = differences(old, new)
    if differ:
        raise Mismatch("measured with different " + ", ".join(differ)
                       + " from the sittings already in it")


def merge(old, new, order):
    """`new`'s workloads added to `old`'s, in `order`; raises Mismatch when
    they are not one run. Per-workload data (results, errors, checks,
    durations, load, sittings) of a workload in `new` replaces `old`'s."""
    check(old, new)
    ran_now = set(new["workloads"]) | set(new.get("errors", {}))
    merged = {key: new[key] for key in IDENTITY}
    merged["started"] = min(old["started"], new["started"])
    merged["finished"] = max(old["finished"], new["finished"])
    merged["replaced"] = list(old.get("replaced", [])) + [
        {"workload": w, "run": sitting_of(old, w)["run"]}
        for w in order if w in ran_now and (w in old["workloads"] or w in old.get("errors", {}))]
    for key in ("workloads", "errors", "durations", "load", "sittings"):
        combined = {**{w: v for w, v in old.get(key, {}).items() if w not in ran_now},
                    **new.get(key, {})}
        if key == "sittings":  # a results.json from before sittings were kept
            combined = {**{w: sitting_of(old, w) for w in old["workloads"]
                           if w not in ran_now}, **combined}
        merged[key] = {w: combined[w] for w in order if w in combined}
    merged["checks"] = ([c for c in old.get("checks", []) if c["workload"] not in ran_now]
                        + new.get("checks", []))
    return merged


def describe(results):
    """[(the sitting's start, its workloads, its minutes)] in order, or []
    for a run done in one go with nothing replaced."""
    sittings = results.get("sittings", {})
    runs = sorted({s["run"] for s in sittings.values()})
    if len(runs) < 2 and not results.get("replaced"):
        return []
    out = []
    for run in runs:
        names = [w for w, s in sittings.items() if s["run"] == run]
        minutes = sum(sittings[w]["finished"] - sittings[w]["started"] for w in names) / 60
        out.append((run, names, minutes))
    return out
