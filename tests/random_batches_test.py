#!/usr/bin/env python3
"""tools/random_batches.py: the same seed gives the same list, another seed another; every batch
keeps to its sides, its rows' parity or alignment, its edges and its count of 128 x 128 tiles.

Usage: random_batches_test.py --tool PATH/tools/random_batches.py
"""
import argparse
import math
import subprocess
import sys
import unittest

ARGS = None


def run(*flags):
    out = subprocess.run([sys.executable, ARGS.tool, *flags], capture_output=True, text=True,
                         timeout=60, check=True)
    return [tuple(map(int, batch.split("x"))) for batch in out.stdout.strip().split(",")]


class RandomBatches(unittest.TestCase):
    def test_a_seed_gives_one_list(self):
        self.assertEqual(run("--seed", "57"), run("--seed", "57"))
        self.assertNotEqual(run("--seed", "57"), run("--seed", "58"))
        self.assertEqual(len(run("--seed", "1", "--count", "7")), 7)

    def test_batches_keep_to_their_bounds(self):
        for rows in ("odd", "vector"):
            for m, k, n, count in run("--seed", "3", "--count", "200", "--rows", rows):
                for side in (m, k, n):
                    self.assertTrue(260 <= side <= 1100, (m, k, n))
                if rows == "odd":
                    self.assertEqual((k % 2, n % 2), (1, 1))
                else:
                    self.assertEqual((k % 4, n % 4), (0, 0))
                self.assertFalse(1 <= m % 64 <= 4 or 1 <= n % 64 <= 16, (m, n))
                tiles = math.ceil(m / 128) * math.ceil(n / 128)
                self.assertGreaterEqual(count, 2)
                self.assertGreaterEqual(count * tiles, 100 - tiles / 2)
                self.assertLessEqual(count * tiles, max(2 * tiles, 1100 + tiles / 2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
