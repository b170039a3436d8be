"""The foreground and the trimmer in separate blkio cgroups (cgroup v1).

The loop driver serves each blkcg with a worker of its own (kernel 5.12 and
later, `loop_queue_work`), and serves all of one blkcg's requests one after
another. With fio and the trimmer in the same cgroup, a read queued behind
a discard waits in the loop driver whatever slowtrim's model says. In two
cgroups their requests reach slowtrim side by side, so the `queued` model
shows through a loop device (bench/README.md, "The model")."""
import contextlib
import os

from .guard import HarnessError, say, wait_until

ROOT = "/sys/fs/cgroup/blkio"
FOREGROUND = "trimd-bench-fg"
TRIMMER = "trimd-bench-trim"


def path(name):
    return os.path.join(ROOT, name)


@contextlib.contextmanager
def groups():
    """Both cgroups, removed on the way out (once their members are gone)."""
    if not os.path.isfile(os.path.join(ROOT, "cgroup.procs")):
        raise HarnessError(f"split cgroups need cgroup v1's blkio hierarchy at {ROOT}")
    made = []
    try:
        for name in (FOREGROUND, TRIMMER):
            os.makedirs(path(name), exist_ok=True)
            made.append(name)
        yield
    finally:
        for name in made:
            _remove(name)


def _remove(name):
    try:
        wait_until(lambda: _rmdir(name), 30, interval=0.1, what=f"cgroup {name} to empty")
    except HarnessError as e:
        say(f"warning: {e}")


def _rmdir(name):
    try:
        os.rmdir(path(name))
    except FileNotFoundError:
        pass
    except OSError:
        return False  # EBUSY: a member has not exited yet
    return True


def inside(name, args):
    """`args` run as a member of cgroup `name` (the shell execs them, so the
    pid stays the same); None: `args` unchanged."""
    if name is None:
        return args
    procs = os.path.join(path(name), "cgroup.procs")
    return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', procs] + list(args)
