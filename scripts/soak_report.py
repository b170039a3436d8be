#!/usr/bin/env python3
"""The soak's report (scripts/soak.sh): per test, over every round's JUnit
file from ctest, how often it ran and failed and its slowest run against
its TIMEOUT: the margin a loaded machine left it. Failures first, then the
tests closest to their timeout. Exits 1 when a test failed."""

import argparse
import json
import sys
import xml.etree.ElementTree as ElementTree


def timeouts(tests_json, default):
    """{test name: its ctest TIMEOUT in seconds} from `ctest --show-only=json-v1`."""
    with open(tests_json) as f:
        tests = json.load(f).get("tests", [])
    found = {}
    for test in tests:
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        found[test["name"]] = float(props.get("TIMEOUT", default))
    return found


def results(junit_files):
    """{test name: [(status, seconds), ...]}, one entry per round it ran in."""
    runs = {}
    for path in junit_files:
        for case in ElementTree.parse(path).getroot().iter("testcase"):
            status = case.get("status") or "run"
            if case.find("failure") is not None or status == "fail":
                status = "fail"
            elif case.find("skipped") is not None or status in ("notrun", "disabled"):
                status = "skip"
            else:
                status = "pass"
            runs.setdefault(case.get("name"), []).append((status, float(case.get("time", 0))))
    return runs


def report(runs, limits, rounds, load, seconds):
    lines = [f"soak: {rounds} round(s) in {seconds / 60:.1f} min, load: {load}", ""]
    rows = []
    for name, seen in runs.items():
        failures = sum(1 for status, _ in seen if status == "fail")
        skips = sum(1 for status, _ in seen if status == "skip")
        slowest = max(t for _, t in seen)
        limit = limits.get(name)
        share = slowest / limit if limit else 0.0
        rows.append((failures, share, name, len(seen), skips, slowest, limit))
    rows.sort(key=lambda r: (-r[0], -r[1], r[2]))
    lines.append(f"{'test':<70} {'runs':>4} {'fail':>4} {'skip':>4} {'slowest':>9} "
                 f"{'timeout':>8} {'used':>5}")
    for failures, share, name, count, skips, slowest, limit in rows:
        limit_text = f"{limit:.0f} s" if limit else "?"
        lines.append(f"{name[:70]:<70} {count:>4} {failures:>4} {skips:>4} {slowest:>7.1f} s "
                     f"{limit_text:>8} {share:>5.0%}")
    failed = [r for r in rows if r[0]]
    total_runs = sum(r[3] for r in rows)
    lines.append("")
    if failed:
        lines.append(f"{len(rows)} tests, {total_runs} runs; FAILED: "
                     + ", ".join(f"{r[2]} ({r[0]} of {r[3]})" for r in failed))
    elif rows:
        closest = max(rows, key=lambda r: r[1])
        lines.append(f"{len(rows)} tests, {total_runs} runs, no failure; closest to its timeout: "
                     f"{closest[2]} ({closest[5]:.1f} s, {closest[1]:.0%} of {closest[6]:.0f} s)")
    return "\n".join(lines), bool(failed)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", required=True, help="ctest --show-only=json-v1 output")
    parser.add_argument("--default-timeout", type=float, default=1500)
    parser.add_argument("--load", default="?", help="what kept the CPUs busy, for the report")
    parser.add_argument("--seconds", type=float, default=0, help="how long the soak took")
    parser.add_argument("junit", nargs="+", help="each round's ctest --output-junit file")
    args = parser.parse_args()
    text, failed = report(results(args.junit), timeouts(args.tests, args.default_timeout),
                          len(args.junit), args.load, args.seconds)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
