#!/usr/bin/python3
"""Unit tests of the harness's periodic samplers: no root, no devices.
Run: python3 bench/tests/test_samplers.py"""
import os
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lib import disks  # noqa: E402


class AllocationSamplerTest(unittest.TestCase):
    def test_samples_once_more_when_the_block_ends_between_two_ticks(self):
        # A thin-model W1 pass freed its last 5 MiB 0.1 s before the bench
        # stopped watching: without a last sample it was "not reclaimed".
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "backing")
            with open(path, "wb") as f:
                f.write(b"x" * 65536)
                os.fsync(f.fileno())
            with disks.AllocationSampler(path, interval=3600) as sampler:
                while not sampler.samples:  # its first tick, in its thread
                    time.sleep(0.001)
                os.truncate(path, 0)  # the space given back, between two ticks
            self.assertEqual(len(sampler.samples), 2)
            self.assertGreater(sampler.samples[0][1], 0)
            self.assertIsNotNone(sampler.first_at_or_below(0))
            self.assertEqual(sampler.first_at_or_below(0), sampler.samples[-1][0])


if __name__ == "__main__":
    unittest.main()
