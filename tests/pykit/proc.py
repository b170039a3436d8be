"""Running a command from a test, and waiting for a condition instead of
sleeping a guessed time."""

import subprocess
import time


def run(argv, check=True, timeout=600, **kwargs):
    """argv to its end, stdout and stderr together in .stdout (text)."""
    return subprocess.run(argv, check=check, timeout=timeout, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)


def wait_for(predicate, timeout, step=0.2):
    """predicate()'s first true value within `timeout` seconds, else its last
    (asked once more at the deadline)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()
