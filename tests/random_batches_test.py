#!/usr/bin/env python3
"""tools/random_batches.py: the same seed gives the same list, another seed another; every batch
keeps to its sides, its rows' alignment (both odd, both 2 past a multiple of 4, both on 16 bytes,
or one on 16 bytes and the other odd or 2 past), its edges and its count of 128 x 128 tiles, by
default and with --sides, --tiles and --edges cut.

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

    def test_the_seeds_the_docs_cite_keep_their_lists(self):
        # As sessions 56-57 drew them (docs/benchmarks.md), before --rows a_odd and b_odd.
        self.assertEqual(run("--seed", "57", "--count", "2"),
                         [(303, 637, 863, 34), (911, 647, 281, 40)])
        self.assertEqual(run("--seed", "60", "--count", "2", "--rows", "vector"),
                         [(417, 528, 492, 57), (738, 600, 300, 50)])
        # As session 64 drew them.
        self.assertEqual(run("--seed", "91", "--count", "2", "--rows", "pairs"),
                         [(345, 866, 438, 89), (954, 426, 670, 22)])

    def test_batches_keep_to_their_bounds(self):
        self.check_bounds((260, 1100), (100, 1100))

    def test_other_sides_and_tiles_keep_to_theirs(self):
        self.check_bounds((701, 1099), (100, 400), "--sides", "701:1099", "--tiles", "100:400")

    def test_cut_edges_keep_to_theirs(self):
        self.check_bounds((260, 1100), (100, 1100), "--edges", "cut")

    def check_bounds(self, sides, all_tiles, *flags):
        # K and N mod 4: 1 stands for odd (1 or 3).
        residues = {"odd": (1, 1), "vector": (0, 0), "a_odd": (1, 0), "b_odd": (0, 1),
                    "pairs": (2, 2), "a_pairs": (2, 0), "b_pairs": (0, 2)}
        for rows, residue in residues.items():
            for m, k, n, count in run("--seed", "3", "--count", "200", "--rows", rows, *flags):
                for side in (m, k, n):
                    self.assertTrue(sides[0] <= side <= sides[1], (m, k, n))
                for side, side_residue in zip((k, n), residue):
                    got = side % 2 if side_residue == 1 else side % 4
                    self.assertEqual(got, side_residue, (rows, k, n))
                if "cut" in flags:
                    self.assertTrue(1 <= m % 64 <= 4 and n % 64 <= 4, (m, n))
                else:
                    self.assertFalse(1 <= m % 64 <= 4 or 1 <= n % 64 <= 16, (m, n))
                tiles = math.ceil(m / 128) * math.ceil(n / 128)
                self.assertGreaterEqual(count, 2)
                self.assertGreaterEqual(count * tiles, all_tiles[0] - tiles / 2)
                self.assertLessEqual(count * tiles, max(2 * tiles, all_tiles[1] + tiles / 2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
