"""A tier as ctest tests. `setup` makes what every check shares (a booted
container, a browser on a page) and leaves it running, with a handle (what
the checks need to find it) and a ledger (how to undo it) in a state
directory; each check is a test of its own that picks the handle up
(`check NAME`); `cleanup` runs the ledger. The tier's CMakeLists.txt ties
them with FIXTURES_SETUP, FIXTURES_REQUIRED and FIXTURES_CLEANUP, so
`ctest -R <tier>_<check>` runs the setup, that check and the cleanup.
`all` does the three in one process (by hand; a temporary state directory
unless --state is given), `list` prints the checks in their order.

A tier gives fixture.main() an object with:
  NAME                      "boot tier", for messages
  checks                    a Registry: @checks marks `def check_NAME(session, checks)`
  add_arguments(parser)     its own options
  missing(args)             why it cannot run here, or None
  setup(kept, args)         makes everything, each undo step pushed to `kept`
                            (a Cleanup with a ledger: Undo steps only);
                            returns the handle, a JSON-able dict
  connect(session)          (optional) sets on `session` what checks use
                            (a container, a page), from session.handle
  enter(handle)             (optional) joins the namespaces the setup made,
                            before a check or the cleanup

A check gets the Session and a Checks. It starts from the state the setup
left, whatever ran before it, and leaves it so (a check that stops trimd
starts it again): any check can run alone, in any order."""

import argparse
import json
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from .checks import Checks, log
from .ci import cannot_run
from .cleanup import Cleanup


class Registry:
    """The tier's checks, in the order they were defined (the order ctest
    runs them in): `check_watchdog` is the check "watchdog"."""

    def __init__(self):
        self.checks = {}

    def __call__(self, fn):
        name = fn.__name__.removeprefix("check_")
        if name in self.checks:
            raise ValueError(f"two checks named {name}")
        self.checks[name] = fn
        return fn


class State:
    """The state directory: handle.json and ledger.json."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.handle_path = self.directory / "handle.json"
        self.ledger = self.directory / "ledger.json"

    def read_handle(self):
        try:
            return json.loads(self.handle_path.read_text())
        except FileNotFoundError:
            return None

    def write_handle(self, handle):
        self.directory.mkdir(parents=True, exist_ok=True)
        part = self.handle_path.with_name("handle.json.part")
        part.write_text(json.dumps(handle, indent=1))
        part.replace(self.handle_path)


class Session:
    """What a check works with: the setup's handle, its own cleanup (undone
    when the check ends) and the fixture's kept one (undone by the cleanup
    test), plus what the tier's connect() adds."""

    def __init__(self, state, handle, args):
        self.state = state
        self.handle = handle
        self.args = args
        self.cleanup = Cleanup()
        self.kept = Cleanup.resume(state.ledger)

    def save_handle(self):
        """After a check changed what the handle names (a restarted process)."""
        self.state.write_handle(self.handle)


def _setup(tier, state, args):
    if state.ledger.exists():
        log(f"{tier.NAME}: undoing what an earlier run left ({state.ledger})")
        Cleanup.resume(state.ledger).run_all()
    state.directory.mkdir(parents=True, exist_ok=True)
    state.handle_path.unlink(missing_ok=True)
    reason = tier.missing(args)
    if reason:
        state.write_handle({"missing": reason})
        return cannot_run(tier.NAME, reason)
    started = time.monotonic()
    kept = Cleanup(state.ledger)
    try:
        handle = tier.setup(kept, args)
    except BaseException as error:  # a failure, SIGTERM or Ctrl-C: undo what was made, say why
        log(f"{tier.NAME}: setup failed: {error!r}\n{traceback.format_exc()}"
            + (getattr(error, "stdout", "") or getattr(error, "output", "") or ""))
        kept.run_all()
        if not isinstance(error, Exception):
            raise
        return 1
    state.write_handle(handle)
    log(f"{tier.NAME}: set up in {time.monotonic() - started:.0f} s")
    return 0


def _check(tier, state, args, name):
    fn = tier.checks.checks.get(name)
    if fn is None:
        print(f"{tier.NAME}: no check named {name!r}; `list` names them")
        return 2
    handle = state.read_handle()
    if handle is None:
        print(f"{tier.NAME}: nothing set up in {state.directory}: the setup test runs first "
              "(ctest adds it: FIXTURES_REQUIRED)")
        return 1
    if "missing" in handle:
        return cannot_run(tier.NAME, handle["missing"])
    if hasattr(tier, "enter"):
        tier.enter(handle)
    session = Session(state, handle, args)
    checks = Checks()
    started = time.monotonic()
    try:
        if hasattr(tier, "connect"):
            tier.connect(session)
        fn(session, checks)
    except Exception as error:  # a broken check is a failure, and its cleanup still runs
        checks.check(False, f"{name} aborted: {error!r}",
                     (getattr(error, "stdout", "") or getattr(error, "output", "") or "")
                     + traceback.format_exc())
    finally:
        session.cleanup.run_all()
    log(f"{tier.NAME} {name}: {checks.passed} passed, {checks.failed} failed in "
        f"{time.monotonic() - started:.1f} s")
    return checks.exit_status()


def _cleanup(tier, state):
    handle = state.read_handle() or {}
    if hasattr(tier, "enter") and "missing" not in handle and handle:
        tier.enter(handle)
    failed = Cleanup.resume(state.ledger).run_all()
    state.handle_path.unlink(missing_ok=True)
    return 1 if failed else 0


def _all(tier, state, args):
    status = _setup(tier, state, args)
    if status != 0:
        return status
    failed = [name for name in tier.checks.checks if _check(tier, state, args, name) != 0]
    status = _cleanup(tier, state)
    log(f"{tier.NAME}: {len(failed)} of {len(tier.checks.checks)} checks failed"
        + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed or status else 0


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


def main(tier, argv=None):
    # SIGTERM (ctest or scripts/soak.sh stopping) unwinds like an error: the
    # setup undoes what it made, a check runs its own cleanup.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    parser = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--state", type=Path,
                        help="the fixture's state directory (handle.json, ledger.json)")
    tier.add_arguments(parser)
    parser.add_argument("command", choices=("list", "setup", "check", "cleanup", "all"))
    parser.add_argument("check", nargs="?", help="the check to run (command check)")
    args = parser.parse_args(argv)
    if args.command == "list":
        print("\n".join(tier.checks.checks))
        return 0
    if args.command == "all" and not args.state:
        scratch = Path(tempfile.mkdtemp(prefix="trimd-fixture-"))
        try:
            return _all(tier, State(scratch), args)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if not args.state:
        parser.error("--state is needed")
    state = State(args.state)
    if args.command == "setup":
        return _setup(tier, state, args)
    if args.command == "check":
        if not args.check:
            parser.error("check needs the check's name")
        return _check(tier, state, args, args.check)
    if args.command == "cleanup":
        return _cleanup(tier, state)
    return _all(tier, state, args)
