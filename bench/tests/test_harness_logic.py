#!/usr/bin/python3
"""Unit tests of the benchmark's judging logic: no root, no devices, no
timing. Run: python3 bench/tests/test_harness_logic.py"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import report_fio  # noqa: E402
import report_targets  # noqa: E402
import report_w5  # noqa: E402
import report_w5_duty  # noqa: E402
import report_w6  # noqa: E402
from lib import disks  # noqa: E402
from lib import ratios  # noqa: E402
from lib.context import Params  # noqa: E402
from lib import backend_sampler, blkio, etcd, host_trims, shared_backend  # noqa: E402
from lib import message_ids, trimd  # noqa: E402
from workloads import w1_delete_storm as w1  # noqa: E402
from workloads import w3_idle_throughput as w3  # noqa: E402
from workloads import w5_trim_storm as w5  # noqa: E402

LIMITS = (20, 1024 * 1024, 0.05)  # trimd's default idle limits


def counters(writes=0, sectors=0, ticks_ms=0):
    return {"reads": 0, "writes": writes, "sectors_read": 0, "sectors_written": sectors,
            "io_ticks_ms": ticks_ms}


def series(busy_until, end, step=0.2):
    """A disk written at 100 writes/s until `busy_until`, silent after."""
    out, t, writes = [], 0.0, 0
    while t <= end:
        if t <= busy_until:
            writes += 20
        out.append((t, counters(writes, writes * 8, int(min(t, busy_until) * 500))))
        t = round(t + step, 6)
    return out


class RmSyncRatio(unittest.TestCase):
    def test_pairs_trials_so_a_burst_that_hits_both_cancels_out(self):
        base = {"rm_sync_s": 1.0, "rm_sync_trials": [1.0, 2.0, 1.0], "rm_sync_median": 1.0}
        other = {"rm_sync_s": 1.0, "rm_sync_trials": [1.0, 2.0, 2.0], "rm_sync_median": 2.0}
        r, _, why = report_targets.rm_sync_ratio(other, base)
        self.assertAlmostEqual(r, 1.0)  # ratios 1, 1, 2: the median is 1, not 2 / 1
        self.assertIn("twin by twin", why)

    def test_falls_back_to_one_ratio_without_repeated_trials(self):
        r, value, why = report_targets.rm_sync_ratio({"rm_sync_s": 1.5}, {"rm_sync_s": 1.0})
        self.assertAlmostEqual(r, 1.5)
        self.assertIn("1.50×", value)
        self.assertEqual(why, "one twin each")


class HonestRatios(unittest.TestCase):
    def test_pairs_each_run_with_the_baseline_beside_it(self):
        self.assertEqual(ratios.paired([2.0, 3.0, 1.0], [1.0, 3.0, 0.0]), [2.0, 1.0])

    def test_the_interval_holds_the_median_and_narrows_with_agreeing_pairs(self):
        r, low, high = ratios.median_interval([1.0, 1.02, 0.98, 1.01, 0.99])
        self.assertAlmostEqual(r, 1.0)
        self.assertLessEqual(low, r)
        self.assertGreaterEqual(high, r)
        _, wide_low, wide_high = ratios.median_interval([0.5, 1.0, 1.5, 0.7, 1.3])
        self.assertGreater(wide_high - wide_low, high - low)

    def test_the_same_ratios_give_the_same_interval(self):
        data = [1.1, 0.9, 1.3, 1.0, 1.2, 0.95]
        self.assertEqual(ratios.median_interval(data), ratios.median_interval(data))

    def test_met_missed_or_noise_by_where_the_interval_lies(self):
        self.assertIs(ratios.judge(0.9, 1.05, 1.10), True)
        self.assertIs(ratios.judge(1.2, 1.4, 1.10), False)
        self.assertEqual(ratios.judge(1.0, 1.3, 1.10), "noise")

    def test_a_w1_target_straddling_its_limit_is_called_noise(self):
        base = {"rm_sync_s": 1.0, "rm_sync_trials": [1.0] * 5}
        other = {"rm_sync_s": 1.1, "rm_sync_trials": [0.9, 1.0, 1.1, 1.2, 1.3]}
        r, value, _ = report_targets.rm_sync_ratio(other, base)
        self.assertIn("[", value)
        self.assertEqual(report_targets.rm_sync_verdict(other, base, r), "noise")


class W2Rounds(unittest.TestCase):
    @staticmethod
    def w2(trimd_p99s, notrim_p99s):
        probe = {"probe": {"write": {"p99": 1.0}}}
        return {"configs": {"notrim": probe, "trimd": probe},
                "p99_rounds": {"notrim": notrim_p99s, "trimd": trimd_p99s}}

    def test_the_p99_target_is_the_median_of_ratios_round_by_round(self):
        targets = report_targets.w2_targets(self.w2([1.0, 1.1, 5.0], [1.0, 1.0, 5.0]))
        self.assertEqual(len(targets), 1)
        self.assertTrue(targets[0]["value"].startswith("1.00×"), targets[0]["value"])
        self.assertIn("median of 3 rounds", targets[0]["why"])

    def test_rounds_far_beyond_the_limit_miss_it(self):
        targets = report_targets.w2_targets(self.w2([3.0, 3.1, 2.9], [1.0, 1.0, 1.0]))
        self.assertIs(targets[0]["met"], False)


class W3Rounds(unittest.TestCase):
    @staticmethod
    def config(wall_s, active_s=None, below_fstrim_mib=0):
        c = {"run": {"wall_s": wall_s}, "alloc_start": 2000 * disks.MiB,
             "alloc_end": 1000 * disks.MiB,
             "residual": {"below_fstrim": below_fstrim_mib * disks.MiB}}
        if active_s is not None:
            c["trimd_pass"] = {"active_s": active_s}
        return c

    def w3(self, trimd_s, base_s, baseline="fstrim"):
        configs = {"fstrim": self.config(base_s[0]), "fstrim-stepped": self.config(base_s[0]),
                   "trimd": self.config(base_s[0] + 2, trimd_s[0])}
        return {"configs": configs, "time_baseline": baseline,
                "rounds": [{"baseline": b, "trimd": t} for b, t in zip(base_s, trimd_s)]}

    def test_the_pass_time_is_the_median_of_ratios_round_by_round(self):
        r, met, value, why = report_targets.w3_pass_ratio(
            self.w3([23.7, 22.2, 22.0, 22.4, 22.1], [19.9, 22.3, 22.1, 22.0, 22.2]))
        self.assertAlmostEqual(r, 1.0, delta=0.01)
        self.assertIs(met, "noise")  # the one slow pair reaches past 1.10 in the interval
        self.assertIn("median of 5 paired rounds", why)
        self.assertTrue(value.startswith("1.00× ["), value)

    def test_every_round_beyond_the_limit_misses_it(self):
        _, met, _, _ = report_targets.w3_pass_ratio(self.w3([30, 31, 29], [20, 20, 20]))
        self.assertIs(met, False)

    def test_one_round_is_compared_as_it_is(self):
        r, met, _, why = report_targets.w3_pass_ratio(self.w3([23.7], [19.9]))
        self.assertAlmostEqual(r, 23.7 / 19.9)
        self.assertIs(met, False)
        self.assertEqual(why, "one pass each")

    def test_the_time_baseline_is_the_fstrim_that_does_trimds_work(self):
        # xfs: one whole-filesystem call skipped small extents that ranges reach
        configs = {"fstrim": self.config(1.0, below_fstrim_mib=900),
                   "fstrim-stepped": self.config(19.0)}
        self.assertEqual(w3.time_baseline(configs), "fstrim-stepped")
        configs["fstrim"] = self.config(20.0, below_fstrim_mib=0)
        self.assertEqual(w3.time_baseline(configs), "fstrim")

    def test_the_target_names_its_baseline(self):
        targets = report_targets.w3_targets(
            {"fs": {"xfs": self.w3([19.6, 19.5], [19.1, 19.3], baseline="fstrim-stepped")}})
        self.assertIn("fstrim over 64 MiB ranges", targets[0]["what"])


class FioTable(unittest.TestCase):
    @staticmethod
    def run_(p99, iops, discards=0, round_=None):
        r = {"fio": {"write": {"p50": 0.1, "p99": p99, "p99.9": p99 * 2, "iops": iops}},
             "discards_during": discards, "alloc_end": 2**20, "fio_start_s": -3.0}
        if round_ is not None:
            r["round"] = round_
        return r

    @staticmethod
    def row_of(table, peer):
        return next(line for line in table.splitlines() if line.startswith(f"| {peer} |"))

    def test_a_peer_is_compared_with_the_no_trim_run_of_its_own_round(self):
        runs = {"notrim": [self.run_(1.0, 100), self.run_(4.0, 100)],
                "discard": [self.run_(2.0, 50, 300), self.run_(8.0, 50, 310)]}
        table = report_fio.job_table("qd1", runs, {"discard": "notrim"})
        discard_row = self.row_of(table, "discard")
        self.assertIn("2.00× [2.00–2.00]", discard_row)  # p99 doubled in both rounds
        self.assertIn("0.50×", discard_row)               # IOPS halved
        self.assertIn("| 305 |", discard_row)             # median discards during the job
        self.assertIn("**missed**", discard_row)          # 2× > 1.25×
        self.assertIn("| baseline |", self.row_of(table, "notrim"))

    def test_pairs_by_the_round_each_run_records(self):
        base = [self.run_(1.0, 100, round_=0), self.run_(4.0, 100, round_=1)]
        mine = [self.run_(4.4, 100, round_=1), self.run_(1.1, 100, round_=0)]
        pairs = report_fio.paired_ratios(mine, base, "write", "p99")
        self.assertEqual([round(p, 2) for p in pairs], [1.1, 1.1])

    def test_each_peer_is_paired_with_the_baseline_of_its_timeline(self):
        from workloads import fio_foregrounds as fio
        self.assertEqual(fio.baseline_for("discard"), "notrim")
        self.assertEqual(fio.baseline_for("fstrim"), "notrim")
        self.assertEqual(fio.baseline_for("trimd"), "notrim-after")
        self.assertEqual(fio.baseline_for("async"), "notrim-after")
        self.assertEqual(fio.baseline_for("notrim-after"), "notrim-after")
        runs = {"notrim": [self.run_(9.0, 100)], "notrim-after": [self.run_(1.0, 100)],
                "trimd": [self.run_(1.1, 100)]}
        baselines = {p: fio.baseline_for(p) for p in runs}
        trimd_row = self.row_of(report_fio.job_table("qd1", runs, baselines), "trimd")
        self.assertIn("| notrim-after | 1.10× | **met** |", trimd_row)

    def test_async_runs_on_btrfs_for_the_chosen_jobs_only(self):
        from workloads import fio_foregrounds as fio
        jobs = ("qd1-randwrite-fsync",)
        self.assertEqual(fio.peers_for("btrfs", "qd1-randwrite-fsync", jobs),
                         ["notrim", "discard", "fstrim", "notrim-after", "trimd", "async"])
        self.assertNotIn("async", fio.peers_for("btrfs", "qd32-randread", jobs))
        self.assertNotIn("async", fio.peers_for("ext4", "qd1-randwrite-fsync", jobs))
        self.assertNotIn("async-tuned", fio.peers_for("btrfs", "qd1-randwrite-fsync", jobs))

    def test_the_p99_verdict_is_met_missed_or_noise_by_the_interval(self):
        self.assertIs(report_fio.p99_verdict([1.0, 1.1, 1.05]), True)
        self.assertIs(report_fio.p99_verdict([2.0, 1.9, 2.1]), False)
        self.assertEqual(report_fio.p99_verdict([0.9, 1.6, 1.0, 1.5, 1.2]), "noise")
        self.assertIsNone(report_fio.p99_verdict([]))

    def test_a_peer_that_never_discarded_before_fio_gets_no_verdict_but_void(self):
        runs = {"notrim-after": [self.run_(1.0, 100)],
                "async": [dict(self.run_(1.0, 100), discarding_at_start=False)]}
        row = self.row_of(report_fio.job_table("qd1", runs, {"async": "notrim-after"}), "async")
        self.assertIn("void: never discarding", row)
        self.assertNotIn("**met**", row)

    def test_reads_what_trimd_was_doing_when_fio_started(self):
        from workloads import fio_foregrounds as fio
        events = [{"t": 1.0, "kind": "pass_start"}, {"t": 2.0, "kind": "chunk"},
                  {"t": 5.1, "kind": "runner_killed"}, {"t": 5.2, "kind": "pause"}]
        got = fio.trimd_at_fio(events, 5.0)
        self.assertEqual(got["chunks_before_fio"], 1)
        self.assertTrue(got["in_flight_at_fio"])
        self.assertEqual(got["preempted"], 1)
        self.assertAlmostEqual(got["killed_after_fio_s"], 0.1)
        self.assertFalse(got["pass_ended_before_fio"])
        over = fio.trimd_at_fio(events[:2] + [{"t": 3.0, "kind": "pass_end"}], 5.0)
        self.assertFalse(over["in_flight_at_fio"])
        self.assertTrue(over["pass_ended_before_fio"])

    def test_fio_json_reads_as_milliseconds_and_iops(self):
        from workloads import fio_foregrounds as fio
        pct = {"50.000000": 1_000_000, "99.000000": 5_000_000, "99.900000": 9_000_000}
        got = fio.summary({"jobs": [{"write": {"total_ios": 10, "iops": 42.5,
                                               "clat_ns": {"percentile": pct}},
                                     "read": {"total_ios": 0},
                                     "sync": {"total_ios": 10, "lat_ns": {"percentile": pct}}}]})
        self.assertEqual(got["write"], {"iops": 42.5, "p50": 1.0, "p99": 5.0, "p99.9": 9.0})
        self.assertNotIn("read", got)
        self.assertEqual(got["fsync"]["p99.9"], 9.0)


class LastBusy(unittest.TestCase):
    def test_finds_the_last_second_above_trimds_limits(self):
        busy = disks.last_busy(series(busy_until=5.0, end=20.0), 20.0, *LIMITS)
        self.assertIsNotNone(busy)
        self.assertGreaterEqual(busy, 5.0)
        self.assertLess(busy, 6.2)  # the second after the last write still counts them

    def test_ignores_io_below_the_limits(self):
        trickle = [(t / 5, counters(writes=t // 10)) for t in range(100)]  # 0.5 writes/s
        self.assertIsNone(disks.last_busy(trickle, 100.0, *LIMITS))

    def test_ignores_samples_from_before_on(self):
        samples = series(busy_until=15.0, end=20.0)
        busy = disks.last_busy(samples, 8.0, *LIMITS)
        self.assertLess(busy, 8.0)

    def test_counts_a_busy_fraction_alone(self):
        samples = [(t / 5, counters(ticks_ms=int(t / 5 * 100))) for t in range(50)]  # 10% busy
        self.assertIsNotNone(disks.last_busy(samples, 100.0, *LIMITS))


class W1Reclaim(unittest.TestCase):
    params = {"idle_window_s": 30.0, "sample_interval_s": 1.0}

    def config(self, **extra):
        c = {"probe_end": 100.0, "reclaimed_at": 260.0, "trimd_pass": {"active_s": 100.0}}
        c.update(extra)
        return c

    def test_counts_from_the_load_when_the_disk_went_quiet_with_it(self):
        t = report_targets.w1_reclaim_target("ext4", self.config(), self.params)
        self.assertFalse(t["met"])  # 160 s > 30 + 100 + sampling
        self.assertIn("after the load stopped", t["value"])

    def test_counts_from_when_the_disk_went_idle_after_the_load(self):
        t = report_targets.w1_reclaim_target("btrfs", self.config(disk_quiet_at=128.0),
                                             self.params)
        self.assertTrue(t["met"])  # 132 s <= 133 s
        self.assertIn("28.0 s after the load stopped", t["value"])

    def test_level_is_the_in_use_fstrim_when_there_is_one(self):
        fresh = {"after": 400 * disks.MiB, "floor": 390 * disks.MiB, "in_use_after": None}
        in_use = dict(fresh, in_use_after=450 * disks.MiB)
        before = 1000 * disks.MiB
        self.assertLess(w1.reclaim_level(fresh, before), 400 * disks.MiB)
        self.assertGreater(w1.reclaim_level(in_use, before), 450 * disks.MiB)


class W1SameMountReclaim(unittest.TestCase):
    def run_of(self, samples):
        return {"t0": 10.0, "alloc_start": 1000 * disks.MiB, "alloc_samples": samples,
                "reclaim_level": 455 * disks.MiB, "reclaimed_at": None, "reclaim_s": None}

    def test_times_the_reclaim_to_what_an_fstrim_on_the_same_mount_reached(self):
        samples = [(20.0, 1000 * disks.MiB), (90.0, 480 * disks.MiB), (95.0, 471 * disks.MiB)]
        out = w1.same_mount_reclaim(self.run_of(samples), {"after": 466 * disks.MiB})
        self.assertEqual(out["reclaimed_at"], 95.0)  # within 1% of the 534 MiB freed
        self.assertEqual(out["reclaim_s"], 85.0)
        self.assertIsNone(out["reclaimed_at_in_use"])  # the twin's verdict is kept beside it

    def test_is_not_reclaimed_when_that_fstrim_still_found_much_more(self):
        samples = [(20.0, 1000 * disks.MiB), (95.0, 480 * disks.MiB)]
        out = w1.same_mount_reclaim(self.run_of(samples), {"after": 466 * disks.MiB})
        self.assertIsNone(out["reclaimed_at"])
        self.assertIsNone(out["reclaim_s"])


class W1Alloc(unittest.TestCase):
    def test_compares_btrfs_with_the_twin_fstrimmed_on_a_mount_in_use(self):
        data = {"reference_alloc": 430 * disks.MiB, "reference_in_use": 530 * disks.MiB}
        t = report_targets.w1_alloc_target("btrfs", {"alloc_end": 472 * disks.MiB}, data)
        self.assertTrue(t["met"])
        self.assertIn("in use", t["what"])

    def test_compares_btrfs_with_an_fstrim_on_trimds_own_mount_when_there_is_one(self):
        data = {"reference_alloc": 430 * disks.MiB, "reference_in_use": 530 * disks.MiB}
        same = {"before": 472 * disks.MiB, "after": 466 * disks.MiB, "discards": 900}
        t = report_targets.w1_alloc_target("btrfs", {"alloc_end": 466 * disks.MiB,
                                                     "same_mount_fstrim": same}, data)
        self.assertFalse(t["met"])  # that fstrim still reclaimed 6 MiB: +1.3%
        self.assertIn("its mount", t["what"])
        self.assertIn("530.0", t["why"])

    def test_compares_with_the_fstrimmed_twin_otherwise(self):
        data = {"reference_alloc": 430 * disks.MiB}
        t = report_targets.w1_alloc_target("ext4", {"alloc_end": 472 * disks.MiB}, data)
        self.assertFalse(t["met"])


class Discards(unittest.TestCase):
    def test_holds_trimds_discards_to_fstrims_within_two_percent(self):
        met = report_targets.discards_target("W3", "ext4", {"discards": 1020}, 1000)
        missed = report_targets.discards_target("W3", "ext4", {"discards": 1021}, 1000)
        self.assertTrue(met["met"])
        self.assertFalse(missed["met"])

    def test_w1_counts_the_ranged_fstrim_where_one_call_left_free_extents(self):
        xfs = {"fresh_discards": 343, "stepped_discards": 10044, "below_fstrim": 99 * disks.MiB,
               "reclaimed": 2 * disks.MiB}
        ext4 = {"fresh_discards": 10032, "stepped_discards": 3, "below_fstrim": 0,
                "reclaimed": 98 * disks.MiB}
        self.assertEqual(w1.fstrim_discards(xfs), 10387)
        self.assertEqual(w1.fstrim_discards(ext4), 10032)

    def test_w3_compares_with_the_ranged_fstrim_where_one_call_left_free_extents(self):
        configs = {"fstrim": {"sent": {"discards": 444}, "alloc_start": 2000 * disks.MiB,
                              "alloc_end": 1990 * disks.MiB,
                              "residual": {"below_fstrim": 900 * disks.MiB}},
                   "fstrim-stepped": {"sent": {"discards": 8297}}}
        self.assertEqual(report_targets.w3_fstrim_discards(configs)[0], 8297)
        configs["fstrim"]["residual"]["below_fstrim"] = 0
        self.assertEqual(report_targets.w3_fstrim_discards(configs)[0], 444)


class BtrfsAsyncPeer(unittest.TestCase):
    FREED = 100 * disks.MiB

    def run_of(self, back_s, p99=3.0, discards=100):
        """Allocation samples every 10 s from t0 = 0: growing with the
        probe's writes, then down by the storm's space at `back_s`."""
        samples = []
        for t in range(0, 400, 10):
            allocated = 1000 * disks.MiB + t * disks.MiB // 10
            if back_s is not None and t >= back_s:
                allocated -= self.FREED
            samples.append((float(t), allocated))
        return {"t0": 0.0, "alloc_samples": samples, "reclaim_s": None,
                "probe": {"write": {"p99": p99}}, "sent": {"discards": discards}}

    def test_runs_on_btrfs_in_full_runs_only(self):
        self.assertIn("async", w1.configs_for("btrfs"))
        self.assertNotIn("async", w1.configs_for("ext4"))
        self.assertNotIn("async", w1.configs_for("btrfs", with_async=False))
        self.assertEqual(w1.mount_options("async", "btrfs"), "discard=async")

    def test_the_storms_space_counts_from_the_highest_allocation_so_far(self):
        self.assertEqual(report_targets.storm_space_back_s(self.run_of(210.0), self.FREED), 210.0)
        self.assertIsNone(report_targets.storm_space_back_s(self.run_of(None), self.FREED))

    def test_trimd_is_held_to_giving_the_storms_space_back_no_later_than_async(self):
        sooner = report_targets.w1_async_target("btrfs", self.run_of(100.0), self.run_of(210.0),
                                                self.FREED)
        later = report_targets.w1_async_target("btrfs", self.run_of(220.0), self.run_of(210.0),
                                               self.FREED)
        self.assertTrue(sooner["met"])
        self.assertFalse(later["met"])

    def test_async_that_never_gave_it_back_within_the_run_is_beaten_by_any_trimd_that_did(self):
        t = report_targets.w1_async_target("btrfs", self.run_of(100.0), self.run_of(None),
                                           self.FREED)
        self.assertTrue(t["met"])
        self.assertIn("not within the run", t["value"])
        self.assertIsNone(report_targets.w1_async_target(
            "btrfs", self.run_of(None), self.run_of(None), self.FREED)["met"])


class SecondPass(unittest.TestCase):
    def pass_counts(self, first, second):
        return {"sent": {"discards": first}, "second": {"discards": second}}

    def test_is_held_to_one_percent_where_fstrims_second_run_sends_nothing(self):
        fstrim = self.pass_counts(8277, 0)
        self.assertTrue(report_targets.second_pass_target(
            "ext4", self.pass_counts(8277, 82), fstrim)["met"])
        self.assertFalse(report_targets.second_pass_target(
            "ext4", self.pass_counts(8277, 84), fstrim)["met"])

    def test_is_held_to_fstrims_share_where_the_filesystem_skips_nothing(self):
        fstrim = self.pass_counts(8730, 8700)
        t = report_targets.second_pass_target("btrfs", self.pass_counts(8730, 8700), fstrim)
        self.assertTrue(t["met"])
        self.assertIn("fstrim's second run", t["limit"])


class TrimStorm(unittest.TestCase):
    def test_counts_intervals_open_at_one_instant_and_not_those_that_only_touch(self):
        self.assertEqual(backend_sampler.max_overlap([(0, 2), (1, 3), (2.5, 4)]), 2)
        self.assertEqual(backend_sampler.max_overlap([(0, 1), (1, 2), (2, 3)]), 1)
        self.assertEqual(backend_sampler.max_overlap([]), 0)

    def test_turns_counter_snapshots_into_discards_per_second_and_busy_share(self):
        out = backend_sampler.rates([(10.0, 100, 0), (12.0, 700, 1_000_000_000)])
        self.assertEqual(out, [(12.0, 300.0, 0.5)])

    def test_pairs_each_slot_acquired_with_its_release_and_keeps_one_still_held(self):
        events = {0: [{"kind": "slot_acquired", "t": 1.0}, {"kind": "chunk", "t": 1.1},
                      {"kind": "slot_released", "t": 2.0}, {"kind": "slot_acquired", "t": 5.0}],
                  1: [{"kind": "slot_acquired", "t": 2.0}, {"kind": "slot_released", "t": 3.0}]}
        slots = host_trims.slot_intervals(events, until=9.0)
        self.assertEqual(sorted(slots), [(1.0, 2.0), (2.0, 3.0), (5.0, 9.0)])
        self.assertEqual(backend_sampler.max_overlap(slots), 1)

    def test_a_chunk_lasts_until_the_hosts_next_event(self):
        events = {0: [{"kind": "chunk", "t": 1.0}, {"kind": "chunk", "t": 2.0},
                      {"kind": "pass_end", "t": 2.5}]}
        self.assertEqual(host_trims.chunk_intervals(events, until=9.0), [(1.0, 2.0), (2.0, 2.5)])

    def test_a_hand_over_is_timed_from_the_release_that_let_the_next_host_in(self):
        slots = [(0.0, 2.0), (0.1, 3.0), (2.5, 4.0), (3.2, 5.0)]
        gaps = report_w5.handover_gaps(slots, 2)
        self.assertEqual([round(g, 2) for g in gaps], [0.5, 0.2])

    def test_lays_out_one_partition_per_host_and_the_tenant_last(self):
        script = shared_backend.sfdisk_script(3, 96 * disks.MiB)
        lines = script.splitlines()
        self.assertEqual(lines[0], "label: gpt")
        self.assertEqual(sum("size=98304KiB" in line for line in lines), 3)
        self.assertIn("name=tenant", lines[-1])

    def test_the_fleet_prefix_range_ends_just_past_the_prefix(self):
        self.assertEqual(etcd.prefix_end("/trimd/v1/b/"), "/trimd/v1/b0")

    def test_the_storm_must_reach_its_ratio_with_its_whole_interval(self):
        self.assertTrue(report_w5.judge_at_least(5.2, 9.0, 5.0))
        self.assertFalse(report_w5.judge_at_least(2.0, 4.9, 5.0))
        self.assertEqual(report_w5.judge_at_least(4.0, 6.0, 5.0), "noise")

    def test_judges_the_cap_by_the_paired_p99_ratios(self):
        w5 = {"hosts": 2, "spread_s": 10.0,
              "p99_rounds": {"notrim": [1.0, 1.0], "storm": [8.0, 9.0], "trimd-cap1": [1.1, 1.2]},
              "configs": {"storm": {}, "spread": {"reclaimed_s": 20.0},
                          "trimd-cap1": {"reclaimed_s": 15.0, "max_slots_at_once": 1,
                                         "max_chunks_at_once": 2, "max_hosts_discarding": 1}}}
        verdicts = {t["what"]: t["met"] for t in report_w5.targets(w5, report_targets.target)}
        self.assertTrue(verdicts["tenant p99, every host's fstrim at once, vs no trim"])
        self.assertTrue(verdicts["tenant p99, trimd max_concurrent 1, vs no trim"])
        self.assertTrue(verdicts["every host reclaimed, trimd max_concurrent 1, vs fstrim spread"])
        self.assertFalse(verdicts["hosts trimming at once, max_concurrent 1"])  # 2 calls at once


class DutyBudget(unittest.TestCase):
    """W5 with [fleet] duty and [trim] duty (issue 34)."""

    @staticmethod
    def run_with(duty_s, span_s, reclaimed_s, cap=1):
        samples = [{"t": 10.0 + i, "discards": min(i, int(span_s)) * 7} for i in range(int(span_s) + 5)]
        return {"slowtrim": {"discard_ns": int(duty_s * 1e9)}, "backend_samples": samples,
                "reclaimed_s": reclaimed_s, "max_concurrent": cap}

    def test_every_budget_is_a_configuration_and_the_hosts_budget_counts_for_every_host(self):
        names, trimds = w5.configs(Params.full())
        self.assertEqual(names[0], "notrim")
        self.assertIn("trimd-cap1-duty1%", names)
        self.assertEqual(trimds["trimd-cap1-duty0.5%"], (1, "0.5%", None))
        self.assertEqual(trimds["trimd-host-duty"], (None, None, "1%"))
        self.assertAlmostEqual(w5.duty_of(Params.full(), trimds["trimd-host-duty"]), 0.16)
        self.assertAlmostEqual(w5.duty_of(Params.full(), trimds["trimd-cap1-duty2%"]), 0.02)
        self.assertIsNone(w5.duty_of(Params.full(), trimds["trimd-cap1"]))

    def test_a_budget_stretches_the_deadline_to_twice_the_device_time_over_it(self):
        p = Params.full()
        self.assertEqual(w5.deadline_s(p, (1, "0.5%", None), 1.5), 2 * 1.5 / 0.005 + 30)
        self.assertEqual(w5.deadline_s(p, (1, None, None), 1.5), p.w5_deadline_s)
        self.assertEqual(w5.deadline_s(p, (1, "1%", None), None), p.w5_deadline_s)

    def test_the_measured_duty_is_the_device_time_over_the_span_of_the_discards(self):
        r = self.run_with(duty_s=2.0, span_s=100, reclaimed_s=101.0)
        self.assertAlmostEqual(report_w5_duty.discarding_span(r), 99.0)
        self.assertAlmostEqual(report_w5_duty.measured_duty(r), 2.0 / 99.0)
        self.assertIsNone(report_w5_duty.measured_duty(self.run_with(2.0, 0, None)))

    def test_every_host_is_reclaimed_when_the_backing_file_is_down_and_every_pass_has_ended(self):
        r = {"reclaimed_s": 50.0, "trim_started_at": 100.0, "done_at": {0: 130.0, 1: 180.0}}
        self.assertEqual(report_w5_duty.reclaimed_s(r), 80.0)
        r["reclaimed_s"] = 95.0
        self.assertEqual(report_w5_duty.reclaimed_s(r), 95.0)
        self.assertIsNone(report_w5_duty.reclaimed_s({}))

    def test_waited_writes_are_judged_round_by_round_against_no_trim(self):
        w = {"waited_rounds": {"notrim": [0.04, 0.02], "x": [0.045, 0.04]}}
        excess, mine, base = report_w5_duty.waited_excess(w, "x")
        self.assertAlmostEqual(excess, 0.0125)
        self.assertAlmostEqual(mine, 0.0425)
        self.assertAlmostEqual(base, 0.03)

    def verdicts(self, duty_s, span_s, reclaimed_s, p99s, waited):
        w = {"hosts": 16, "duties": {"trimd-cap1-duty1%": 0.01},
             "p99_rounds": {"notrim": [5.0, 5.0], "trimd-cap1-duty1%": p99s},
             "waited_rounds": {"notrim": [0.04, 0.04], "trimd-cap1-duty1%": waited},
             "configs": {"trimd-cap1-duty1%": self.run_with(duty_s, span_s, reclaimed_s)}}
        return {t["what"]: t["met"]
                for t in report_w5_duty.targets(w, report_targets.target, report_w5.paired_p99)}

    def test_one_slot_at_one_percent_meets_every_target_when_it_keeps_to_its_budget(self):
        v = self.verdicts(2.0, 200, 210.0, [5.5, 6.0], [0.045, 0.048])
        self.assertEqual(set(v.values()), {True}, v)

    def test_each_target_can_be_missed(self):
        v = self.verdicts(2.0, 100, 300.0, [9.0, 10.0], [0.09, 0.07])
        self.assertFalse(v["tenant p99, max_concurrent 1 and [fleet] duty 1%, vs no trim"])
        self.assertFalse(v["tenant writes that waited ≥ 1 discard, duty 1%, vs no trim"])
        self.assertFalse(v["measured duty of the backend, [fleet] duty 1%"])
        self.assertFalse(v["every host reclaimed, [fleet] duty 1%, vs device time / budget"])
        too_slow = self.verdicts(2.0, 300, 280.0, [5.0, 5.0], [0.04, 0.04])
        self.assertFalse(too_slow["measured duty of the backend, [fleet] duty 1%"])


class Blkio(unittest.TestCase):
    def test_no_cgroup_leaves_the_command_alone(self):
        self.assertEqual(blkio.inside(None, ["fio", "x"]), ["fio", "x"])

    def test_the_member_is_the_command_itself(self):
        # cgroup.procs as a plain file: what the shell writes there must be
        # the pid of the command it then runs.
        with tempfile.TemporaryDirectory() as root:
            os.mkdir(os.path.join(root, "g"))
            old, blkio.ROOT = blkio.ROOT, root
            try:
                out = subprocess.run(blkio.inside("g", ["sh", "-c", "echo $$"]),
                                     capture_output=True, text=True, check=True).stdout
            finally:
                blkio.ROOT = old
            with open(os.path.join(root, "g", "cgroup.procs")) as f:
                self.assertEqual(f.read().strip(), out.strip())

    def test_the_queued_model_splits_fio_from_the_trimmer_unless_told_otherwise(self):
        # One cgroup would serialise fio's reads behind the discards in the
        # loop driver: the queued model would not be queued at all.
        self.assertTrue(Params.full().on_model("queued").fio_split_cgroups)
        self.assertFalse(Params.full().on_model("exclusive").fio_split_cgroups)
        self.assertFalse(Params.full().on_model("thin").fio_split_cgroups)


class MessageIds(unittest.TestCase):
    """The bench reads trimd's log by the ids the C++ is built from."""

    def test_every_event_of_the_list_has_its_own_128_bit_id(self):
        ids = message_ids.message_ids()
        self.assertGreaterEqual(len(ids), 18)
        for name, text in ids.items():
            self.assertRegex(text, r"^[0-9a-f]{32}$", name)
        self.assertEqual(len(set(ids.values())), len(ids))

    def test_the_bench_knows_the_events_it_reads_by_their_ids(self):
        ids = message_ids.message_ids()
        self.assertEqual(trimd.EVENTS[ids["PassFinished"]], "pass_end")
        self.assertEqual(trimd.EVENTS[ids["PassFailed"]], "pass_end")
        self.assertEqual(trimd.EVENTS[ids["RunnerKilled"]], "runner_killed")
        self.assertNotIn(ids["ConfigReloaded"], trimd.EVENTS)

    def test_a_line_of_another_form_fails_instead_of_losing_an_event(self):
        with tempfile.NamedTemporaryFile("w", suffix=".def") as f:
            f.write('// a comment\nTRIMD_EVENT(PassStarted, "7f0b13752fa4425c84745f01474944d9")\n'
                    'TRIMD_EVENT(PassFinished, 7b0a00ec70094b2393531ef1942a9c1e)\n')
            f.flush()
            with self.assertRaisesRegex(ValueError, ":3: "):
                message_ids.message_ids(f.name)


class W6HandOversAwayFromTheStop(unittest.TestCase):
    W6 = {"lease_ttl_s": 10.0, "leader_stop": {"at_s": 60.0, "for_s": 10.0},
          # [freed at, hand-over, crash]
          "handovers": [[10.0, 0.2, False], [49.0, 0.4, False], [55.0, 15.0, False],
                        [65.0, 9.0, True], [79.0, 3.0, False], [81.0, 0.3, False],
                        [90.0, 10.2, True]]}

    def test_leaves_out_what_was_freed_from_a_ttl_before_the_stop_to_a_ttl_after(self):
        release = report_w6.away_from_stop(self.W6, crash=False)
        self.assertEqual(release["n"], 3)
        self.assertEqual(release["max_s"], 0.4)
        crash = report_w6.away_from_stop(self.W6, crash=True)
        self.assertEqual((crash["n"], crash["max_s"]), (1, 10.2))

    def test_says_nothing_without_the_list_or_a_stop(self):
        self.assertIsNone(report_w6.away_from_stop({"lease_ttl_s": 10.0, "leader_stop": {}}, False))
        self.assertIsNone(report_w6.away_from_stop({"handovers": [], "leader_stop": {}}, False))


if __name__ == "__main__":
    unittest.main(verbosity=2)
