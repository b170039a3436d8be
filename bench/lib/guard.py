"""Signals, child processes and teardown.

Everything the benchmark sets up is torn down by a `finally`. A signal
(Ctrl-C, SIGTERM, SIGHUP) becomes an `Interrupted` exception, so those
`finally` blocks run on that path too. Teardown steps run with the signals
blocked: a second Ctrl-C must not leave a loop device half detached.
"""
import contextlib
import os
import signal
import subprocess
import sys
import time

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_started = []        # every long-running child, for the last-resort sweep
_interrupted = None  # the first signal received


class Interrupted(BaseException):
    """Not an Exception: `except Exception` must not swallow a Ctrl-C."""

    def __init__(self, signum):
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


class HarnessError(Exception):
    """Something the benchmark needs did not work: exit nonzero."""


def _on_signal(signum, _frame):
    global _interrupted
    if _interrupted is not None:
        return  # already unwinding; teardown goes on
    _interrupted = signum
    raise Interrupted(signum)


def install_signal_handlers():
    for signum in HANDLED_SIGNALS:
        signal.signal(signum, _on_signal)


def exit_code_for(signum):
    return 128 + signum


@contextlib.contextmanager
def signals_blocked():
    """Defer the handled signals until the block is done."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# The emulated disk and the foreground probe stand for hardware and for the
# user's program: they run ahead of whatever else this shared machine does,
# so that its load blurs the measurement less. trimd gets its unit's Nice=10.
EMULATOR_NICE = ["nice", "-n", "-10"]
TRIMD_NICE = ["nice", "-n", "10"]


def require(condition, message):
    """A harness precondition: HarnessError with `message` when it fails."""
    if not condition:
        raise HarnessError(message)


def say(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def run(args, check=True, capture=True, timeout=None, input=None):
    """Runs a short command (`input` on its stdin); returns its stdout.
    Raises HarnessError on failure."""
    try:
        done = subprocess.run(args, check=False, timeout=timeout, text=True, input=input,
                              stdout=subprocess.PIPE if capture else None,
                              stderr=subprocess.PIPE if capture else None)
    except subprocess.TimeoutExpired as e:
        raise HarnessError(f"{args[0]} timed out after {timeout} s") from e
    if check and done.returncode != 0:
        detail = (done.stderr or "").strip()
        raise HarnessError(f"{' '.join(map(str, args))} failed ({done.returncode}): {detail}")
    return done.stdout if capture else ""


def spawn(args, log_path=None, stdout_path=None):
    """Starts a long-running child in its own session, so that a Ctrl-C in
    the terminal reaches only the harness, which then stops it in order."""
    out = open(stdout_path or log_path or os.devnull, "w")
    err = open(log_path or os.devnull, "w") if stdout_path else out
    try:
        proc = subprocess.Popen(args, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    finally:
        out.close()
        if err is not out:
            err.close()
    _started.append(proc)
    return proc


def stop(proc, sig=signal.SIGTERM, grace=10.0, hard_grace=None):
    """Signals `proc`, waits `grace` seconds, then kills it. Returns the exit
    status. A child inside an uninterruptible ioctl (FITRIM) dies only when
    the ioctl returns: `hard_grace` is how long to wait for that."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            say(f"pid {proc.pid} ({os.path.basename(str(proc.args[0]))}) did not stop; killing it")
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            try:
                proc.wait(timeout=hard_grace if hard_grace is not None else 300)
            except subprocess.TimeoutExpired:
                say(f"pid {proc.pid} is still there after SIGKILL")
    if proc in _started and proc.poll() is not None:
        _started.remove(proc)
    return proc.returncode


def run_measured(args, log_path, timeout, on_tick=None):
    """Runs a child to its end and returns its wall time and CPU time (user
    + system, from wait4). `on_tick(pid)` is called while it runs."""
    proc = spawn(args, log_path=log_path)
    start = time.monotonic()
    try:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            if on_tick:
                on_tick(proc.pid)
            if time.monotonic() - start > timeout:
                raise HarnessError(f"{args[0]} took over {timeout:.0f} s; see {log_path}")
            time.sleep(0.05)
    except BaseException:
        stop(proc, grace=30.0, hard_grace=600.0)
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    _started.remove(proc)
    return {"exit": proc.returncode, "wall_s": time.monotonic() - start,
            "cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kib": usage.ru_maxrss}


def sweep_children():
    """Last resort at exit: children some failed path forgot. Returns how many."""
    left = [p for p in _started if p.poll() is None]
    for proc in left:
        stop(proc, grace=5.0, hard_grace=60.0)
    return len(left)


def wait_until(predicate, timeout, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise HarnessError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)
