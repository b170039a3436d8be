#!/usr/bin/python3
"""Unit tests of `bench/run --add`: one report from several sittings, and
never from sittings that measured different things. No root, no devices.
Run: python3 bench/tests/test_sittings.py"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import report_header  # noqa: E402
from lib import sittings  # noqa: E402

ORDER = ["W1", "W2", "W3", "W4", "W5", "FIO"]
CLEAN = {"trimd": "aaaa", "slowtrim": "bbbb", "harness": {"commit": "c0ffee", "dirty": False}}


def sitting(run, names, build=CLEAN, params=None, errors=()):
    """A results.json of one `bench/run` started at `run` (epoch seconds),
    each workload taking 100 s."""
    out = {"started": run, "finished": run + 100 * len(names), "quick": False,
           "params": params or {"model": "queued", "sizes": (1, 2)}, "overrides": [],
           "build": build, "workloads": {}, "errors": {}, "durations": {}, "load": {},
           "sittings": {}, "checks": []}
    for i, name in enumerate(names):
        if name in errors:
            out["errors"][name] = "broke"
        else:
            out["workloads"][name] = {"ran_at": run}
        out["durations"][name] = 100.0
        out["load"][name] = [[0.1, 0, 0], [0.2, 0, 0]]
        out["sittings"][name] = {"run": run, "started": run + 100 * i,
                                 "finished": run + 100 * (i + 1)}
        out["checks"].append({"workload": name, "name": f"{name} at {run}", "ok": True})
    return out


class Merging(unittest.TestCase):
    def test_a_second_sitting_adds_its_workloads_in_the_usual_order(self):
        merged = sittings.merge(sitting(1000, ["W2", "W3"]), sitting(5000, ["W1"]), ORDER)
        self.assertEqual(list(merged["workloads"]), ["W1", "W2", "W3"])
        self.assertEqual(merged["started"], 1000)
        self.assertEqual(merged["finished"], 5100)
        self.assertEqual(merged["replaced"], [])
        self.assertEqual({c["workload"] for c in merged["checks"]}, {"W1", "W2", "W3"})

    def test_a_workload_run_again_replaces_the_earlier_one_and_says_so(self):
        merged = sittings.merge(sitting(1000, ["W1", "W2"]), sitting(5000, ["W2"]), ORDER)
        self.assertEqual(merged["workloads"]["W2"], {"ran_at": 5000})
        self.assertEqual(merged["workloads"]["W1"], {"ran_at": 1000})
        self.assertEqual(merged["replaced"], [{"workload": "W2", "run": 1000}])
        self.assertEqual([c["name"] for c in merged["checks"] if c["workload"] == "W2"],
                         ["W2 at 5000"])

    def test_a_failed_workload_run_again_leaves_no_stale_error(self):
        merged = sittings.merge(sitting(1000, ["W1", "W2"], errors=("W2",)),
                                sitting(5000, ["W2"]), ORDER)
        self.assertEqual(merged["errors"], {})
        self.assertIn("W2", merged["workloads"])

    def test_refuses_sittings_of_another_trimd_build(self):
        other = dict(CLEAN, trimd="dddd")
        with self.assertRaisesRegex(sittings.Mismatch, "build"):
            sittings.merge(sitting(1000, ["W1"]), sitting(5000, ["W2"], build=other), ORDER)

    def test_refuses_sittings_with_other_sizes_or_model(self):
        with self.assertRaisesRegex(sittings.Mismatch, "params"):
            sittings.merge(sitting(1000, ["W1"]),
                           sitting(5000, ["W2"], params={"model": "thin", "sizes": (1, 2)}),
                           ORDER)

    def test_a_tuple_and_the_list_json_made_of_it_are_the_same_setting(self):
        old = sitting(1000, ["W1"], params={"model": "queued", "sizes": [1, 2]})
        self.assertEqual(sittings.differences(old, sitting(5000, ["W2"])), [])

    def test_refuses_a_harness_with_uncommitted_changes(self):
        dirty = dict(CLEAN, harness={"commit": "c0ffee", "dirty": True})
        with self.assertRaisesRegex(sittings.Mismatch, "uncommitted"):
            sittings.merge(sitting(1000, ["W1"], build=dirty), sitting(5000, ["W2"], build=dirty),
                           ORDER)

    def test_refuses_a_results_file_written_before_builds_were_recorded(self):
        old = sitting(1000, ["W1"])
        del old["build"]
        with self.assertRaises(sittings.Mismatch):
            sittings.merge(old, sitting(5000, ["W2"]), ORDER)


class Describing(unittest.TestCase):
    def test_a_run_in_one_go_has_no_sittings_to_describe(self):
        self.assertEqual(sittings.describe(sitting(1000, ["W1", "W2"])), [])

    def test_each_sitting_is_listed_with_its_workloads_and_minutes(self):
        merged = sittings.merge(sitting(1000, ["W2", "W3"]), sitting(5000, ["W1"]), ORDER)
        self.assertEqual(sittings.describe(merged),
                         [(1000, ["W2", "W3"], 200 / 60), (5000, ["W1"], 100 / 60)])

    def test_the_report_header_names_the_sittings_and_what_was_replaced(self):
        merged = sittings.merge(sitting(1000, ["W1", "W2"]), sitting(5000, ["W2"]), ORDER)
        merged["params"] = {"latency_ms": 2, "per_mib_ms": 0.1, "idle_window": "30s",
                            "once_idle_window": "2s", "sample_interval": "1s"}
        text = report_header.header(merged)
        self.assertIn("in 2 sittings", text)
        self.assertIn(f"W2 of {report_header.stamp(1000)} run again and replaced", text)
        self.assertIn("trimd aaaa", text)


class HarnessVersion(unittest.TestCase):
    def setUp(self):
        self.repo = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ["rm", "-rf", self.repo])
        self.git("init", "-q")
        for name in ("run", "README.md"):
            self.append(name, "one")
        self.git("add", ".")
        self.git("commit", "-qm", "one")

    def git(self, *args):
        subprocess.run(["git", "-C", self.repo, "-c", "user.name=t", "-c", "user.email=t@t",
                        *args], check=True, capture_output=True)

    def append(self, name, line):
        with open(os.path.join(self.repo, name), "a") as f:
            f.write(line + "\n")

    def test_a_change_not_committed_marks_the_harness_dirty(self):
        clean = sittings.harness_version(self.repo)
        self.assertEqual(clean["dirty"], False)
        self.assertEqual(len(clean["commit"]), 40)
        self.append("run", "two")
        self.assertEqual(sittings.harness_version(self.repo)["dirty"], True)

    def test_a_changed_note_is_not_a_changed_harness(self):
        before = sittings.harness_version(self.repo)
        self.append("README.md", "two")
        self.assertEqual(sittings.harness_version(self.repo)["dirty"], False)
        self.git("commit", "-qam", "a note")
        self.assertEqual(sittings.harness_version(self.repo), before)

    def test_outside_a_git_checkout_nothing_can_be_vouched_for(self):
        with tempfile.TemporaryDirectory() as plain:
            self.assertEqual(sittings.harness_version(plain), {"commit": None, "dirty": None})


if __name__ == "__main__":
    unittest.main(verbosity=2)
