"""Undo steps, run last-in first-out; each runs even if another fails.

A step is a callable (this process only) or an Undo: data, so that another
process can run it. A fixture's setup leaves its container, mounts and
processes to the checks that use them and to the cleanup test that ends
them: Cleanup(ledger=path) keeps its steps in that file, and
Cleanup.resume(path) in a later process runs them."""

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path


class Undo:
    """Undo steps as data (JSON)."""

    @staticmethod
    def command(argv):
        """Run argv; its failure is reported, not raised (umount -l, losetup -d, ...)."""
        return {"run": [str(a) for a in argv]}

    @staticmethod
    def process(pid, sig=signal.SIGTERM, grace=10, kill_group=False):
        """Send `sig` to the process, SIGKILL (to its process group when
        kill_group) after `grace` seconds. A process that has gone, or whose
        pid now names another process, is left alone."""
        return {"stop": pid, "started": start_time(pid), "signal": int(sig), "grace": grace,
                "kill_group": kill_group}

    @staticmethod
    def path_gone(path, timeout):
        """Wait (at most `timeout` s) until `path` does not exist, e.g. a loop's backing_file."""
        return {"wait_gone": str(path), "timeout": timeout}

    @staticmethod
    def remove(path):
        """Remove a file or a directory tree."""
        return {"remove": str(path)}


def start_time(pid):
    """The process's start time in clock ticks since boot (/proc/PID/stat
    field 22): with the pid, it names one process even after pids wrap."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[19])


def _alive(pid, started):
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rindex(")") + 2:].split()
    return fields[0] != "Z" and int(fields[19]) == started


def _reap(pid):
    """Our own child is reaped; another process's is its parent's business."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _wait_gone(pid, started, timeout):
    deadline = time.monotonic() + timeout
    while True:
        _reap(pid)
        if not _alive(pid, started):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def _stop(step):
    pid, started = step["stop"], step["started"]
    if started is None or not _alive(pid, started):
        return
    os.kill(pid, step["signal"])
    if _wait_gone(pid, started, step["grace"]):
        return
    if step["kill_group"]:
        os.killpg(os.getpgid(pid), signal.SIGKILL)
    else:
        os.kill(pid, signal.SIGKILL)
    if not _wait_gone(pid, started, 15):
        raise RuntimeError(f"process {pid} outlived SIGKILL")


def run_step(step):
    if callable(step):
        step()
    elif "run" in step:
        done = subprocess.run(step["run"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=120, check=False)
        if done.returncode != 0:
            print(f"cleanup: {' '.join(step['run'])}: exit {done.returncode}: "
                  f"{done.stdout.strip()[-300:]}", flush=True)
    elif "stop" in step:
        _stop(step)
    elif "wait_gone" in step:
        deadline = time.monotonic() + step["timeout"]
        while Path(step["wait_gone"]).exists() and time.monotonic() < deadline:
            time.sleep(0.1)
    elif "remove" in step:
        path = Path(step["remove"])
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    else:
        raise ValueError(f"unknown undo step {step!r}")


class Cleanup:
    def __init__(self, ledger=None):
        """ledger: a file that keeps the steps for another process (then
        every step must be an Undo)."""
        self.ledger = Path(ledger) if ledger else None
        self.steps = []

    @classmethod
    def resume(cls, ledger):
        """The steps an earlier process left in `ledger` (none when it is not there)."""
        cleanup = cls(ledger)
        if cleanup.ledger.exists():
            cleanup.steps = [tuple(s) for s in json.loads(cleanup.ledger.read_text())]
        return cleanup

    def push(self, what, step):
        if self.ledger and callable(step):
            raise TypeError(f"{what}: a kept cleanup takes Undo steps, not callables")
        self.steps.append((what, step))
        self._save()

    def run_all(self):
        """Runs every step, last first; returns how many failed."""
        failed = 0
        while self.steps:
            what, step = self.steps.pop()
            try:
                run_step(step)
            except Exception as error:  # keep undoing the rest
                failed += 1
                print(f"cleanup: {what}: {error}", flush=True)
            self._save()
        if self.ledger:
            self.ledger.unlink(missing_ok=True)
        return failed

    def _save(self):
        if not self.ledger:
            return
        part = self.ledger.with_name(self.ledger.name + ".part")
        part.write_text(json.dumps(self.steps, indent=1))
        os.replace(part, self.ledger)
