#!/usr/bin/env python3
"""Unit tests of the Python test kit (no root, no devices): the CI rule,
Checks, Cleanup and its kept ledger, the fixture's registry and commands,
and the soak's report (scripts/soak_report.py)."""

import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import types
import unittest
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from pykit import ci, fixture  # noqa: E402
from pykit.checks import Checks  # noqa: E402
from pykit.cleanup import Cleanup, Undo  # noqa: E402
import soak_report  # noqa: E402


class CiRule(unittest.TestCase):
    def test_skips_outside_ci_and_fails_under_it(self):
        with redirect_stdout(io.StringIO()):
            os.environ.pop("CI", None)
            self.assertEqual(ci.cannot_run("tier", "no tool"), 77)
            os.environ["CI"] = "true"
            try:
                self.assertEqual(ci.cannot_run("tier", "no tool"), 1)
            finally:
                del os.environ["CI"]


class ChecksCount(unittest.TestCase):
    def test_a_run_that_asserted_nothing_fails(self):
        self.assertEqual(Checks().exit_status(), 1)

    def test_one_failure_fails_the_run(self):
        checks = Checks()
        with redirect_stdout(io.StringIO()):
            self.assertTrue(checks.check(True, "holds"))
            self.assertFalse(checks.check(False, "does not", "detail"))
        self.assertEqual((checks.passed, checks.failed, checks.exit_status()), (1, 1, 1))


class KeptCleanup(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="pykit-test-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.dir)]))

    def test_another_process_runs_the_steps_last_first(self):
        ledger = self.dir / "ledger.json"
        kept = Cleanup(ledger)
        log = self.dir / "order"
        for word in ("first", "second"):
            kept.push(word, Undo.command(["sh", "-c", f"echo {word} >> {log}"]))
        self.assertTrue(ledger.exists())
        self.assertEqual(Cleanup.resume(ledger).run_all(), 0)
        self.assertEqual(log.read_text().split(), ["second", "first"])
        self.assertFalse(ledger.exists())

    def test_a_kept_cleanup_refuses_a_callable(self):
        with self.assertRaises(TypeError):
            Cleanup(self.dir / "ledger.json").push("lambda", lambda: None)

    def test_stops_a_process_and_leaves_a_pid_that_names_another_alone(self):
        sleeper = subprocess.Popen(["sleep", "30"])
        step = Undo.process(sleeper.pid, signal.SIGTERM, grace=5)
        stale = dict(step, started=step["started"] - 1)  # the same pid, another process
        cleanup = Cleanup()
        cleanup.push("stale", stale)
        with redirect_stdout(io.StringIO()):
            self.assertEqual(cleanup.run_all(), 0)
        self.assertIsNone(sleeper.poll())
        cleanup.push("sleep", step)
        self.assertEqual(cleanup.run_all(), 0)
        self.assertFalse(Path(f"/proc/{sleeper.pid}").exists())  # stopped and reaped

    def test_removes_files_and_trees(self):
        tree = self.dir / "tree"
        (tree / "sub").mkdir(parents=True)
        (tree / "sub" / "file").write_text("x")
        cleanup = Cleanup()
        cleanup.push("tree", Undo.remove(tree))
        cleanup.run_all()
        self.assertFalse(tree.exists())


def a_tier(made):
    """A tier whose setup and checks write what they did into `made`."""
    tier = types.SimpleNamespace(NAME="test tier", checks=fixture.Registry())

    @tier.checks
    def check_passes(session, checks):
        made.append(("check", session.handle["thing"]))
        checks.check(True, "passes")

    @tier.checks
    def check_fails(session, checks):
        session.cleanup.push("check's own", lambda: made.append(("undo", "check's own")))
        raise RuntimeError("broken")

    def setup(kept, args):
        kept.push("the thing", Undo.command(["true"]))
        made.append(("setup", None))
        return {"thing": 42}

    tier.add_arguments = lambda parser: None
    tier.missing = lambda args: made and None
    tier.setup = setup
    return tier


class Fixture(unittest.TestCase):
    def setUp(self):
        self.state = Path(tempfile.mkdtemp(prefix="pykit-fixture-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(self.state)]))

    def main(self, tier, *argv):
        with redirect_stdout(io.StringIO()) as out:
            status = fixture.main(tier, ["--state", str(self.state), *argv])
        return status, out.getvalue()

    def test_lists_the_checks_in_the_order_they_are_written(self):
        status, out = self.main(a_tier([]), "list")
        self.assertEqual((status, out.split()), (0, ["passes", "fails"]))

    def test_a_check_finds_what_the_setup_left_and_the_cleanup_ends_it(self):
        made = []
        tier = a_tier(made)
        self.assertEqual(self.main(tier, "setup")[0], 0)
        self.assertEqual(json.loads((self.state / "handle.json").read_text()), {"thing": 42})
        self.assertEqual(self.main(tier, "check", "passes")[0], 0)
        status, out = self.main(tier, "check", "fails")
        self.assertEqual(status, 1)
        self.assertIn("fails aborted: RuntimeError('broken')", out)
        self.assertIn(("undo", "check's own"), made)  # its cleanup ran all the same
        self.assertEqual(self.main(tier, "cleanup")[0], 0)
        self.assertFalse((self.state / "ledger.json").exists())
        self.assertEqual(made[:2], [("setup", None), ("check", 42)])

    def test_a_check_without_a_setup_fails_and_says_so(self):
        status, out = self.main(a_tier([]), "check", "passes")
        self.assertEqual(status, 1)
        self.assertIn("the setup test runs first", out)

    def test_a_setup_that_cannot_run_here_makes_its_checks_skip(self):
        tier = a_tier([])
        tier.missing = lambda args: "no such tool"
        os.environ.pop("CI", None)
        self.assertEqual(self.main(tier, "setup")[0], 77)
        self.assertEqual(self.main(tier, "check", "passes")[0], 77)

    def test_a_setup_that_fails_undoes_what_it_made(self):
        tier = a_tier([])
        marker = self.state / "made"

        def broken_setup(kept, args):
            marker.write_text("x")
            kept.push("marker", Undo.remove(marker))
            raise RuntimeError("no")
        tier.setup = broken_setup
        self.assertEqual(self.main(tier, "setup")[0], 1)
        self.assertFalse(marker.exists())

    def test_the_next_setup_undoes_what_an_interrupted_run_left(self):
        tier = a_tier([])
        left = self.state / "left-behind"
        left.write_text("x")
        Cleanup(self.state / "ledger.json").push("left", Undo.remove(left))
        self.assertEqual(self.main(tier, "setup")[0], 0)
        self.assertFalse(left.exists())


JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="3">
 <testcase name="Fast.One" classname="Fast.One" time="1.5" status="run"/>
 <testcase name="Slow.Two" classname="Slow.Two" time="{slow}" status="{status}">{failure}</testcase>
 <testcase name="Gone.Three" classname="Gone.Three" time="0" status="notrun">
  <skipped message="skip"/></testcase>
</testsuite>
"""


class SoakReport(unittest.TestCase):
    def test_counts_runs_failures_and_the_slowest_run_against_the_timeout(self):
        directory = Path(tempfile.mkdtemp(prefix="pykit-soak-"))
        self.addCleanup(lambda: subprocess.run(["rm", "-rf", str(directory)]))
        rounds = []
        for n, (slow, failed) in enumerate(((30.0, False), (90.0, True))):
            path = directory / f"round-{n}.xml"
            path.write_text(JUNIT.format(slow=slow, status="fail" if failed else "run",
                                         failure='<failure message="Failed"/>' if failed else ""))
            rounds.append(str(path))
        runs = soak_report.results(rounds)
        self.assertEqual(runs["Slow.Two"], [("pass", 30.0), ("fail", 90.0)])
        self.assertEqual(runs["Gone.Three"], [("skip", 0.0), ("skip", 0.0)])
        text, failed = soak_report.report(runs, {"Slow.Two": 120.0, "Fast.One": 60.0}, 2,
                                          "2 loops", 60)
        self.assertTrue(failed)
        self.assertIn("FAILED: Slow.Two (1 of 2)", text)
        self.assertRegex(text, r"Slow\.Two +2 +1 +0 +90\.0 s +120 s +75%")


if __name__ == "__main__":
    unittest.main()
