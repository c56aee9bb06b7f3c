#!/usr/bin/env python3
"""tools/bench_compare.py on bench CSVs written by hand: medians over rounds, cuBLAS's over every
process, % of cuBLAS per mode, the fastest mode against the first, a WRONG output marked and left
out of the fastest and of the count at or above cuBLAS; a mode MODE:TILES read from MODE's rows of
forced tiles.

Usage: bench_compare_test.py --tool PATH/tools/bench_compare.py
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None
HEADER = "kind,shape,impl,ms,tflops_or_gbps,pct_of_ref,pct_of_roofline,rel_error,note\n"


def table(entries):
    """CSV text of (shape, impl, ms, rel_error) rows, with a device copy row the tool skips."""
    lines = [f"batched,{shape},{impl},{ms},1,100,50,{error},\"n=1000\"\n"
             for shape, impl, ms, error in entries]
    return HEADER + "".join(lines) + "batched,8x8x8/2,memcpy_d2d,0.001,,1,1,,\"\"\n"


# Two modes, two rounds each. 8x8x8/2: cuBLAS 0.2 (median of 0.1, 0.2, 0.3, 0.2), head 0.25
# (median of 0.2, 0.3), new 0.2. 9x9x9/2: new's output WRONG in one round.
RIGHT, WRONG = 1e-7, 0.5


def rows(cublas_8, ours_8, ours_9, error_9=RIGHT):
    return [("8x8x8/2", "cublas_strided", cublas_8, RIGHT),
            ("8x8x8/2", "matserve_batched", ours_8, RIGHT),
            ("9x9x9/2", "cublas_strided", 0.5, RIGHT),
            ("9x9x9/2", "matserve_batched", ours_9, error_9)]


FILES = {"head_1.csv": rows(0.1, 0.2, 0.4), "head_2.csv": rows(0.3, 0.3, 0.4),
         "new_1.csv": rows(0.2, 0.2, 0.25, WRONG), "new_2.csv": rows(0.2, 0.2, 0.25)}


def compare(files, *modes):
    """The tool's lines, spaces collapsed, on {file name: entries} written to a directory."""
    with tempfile.TemporaryDirectory() as directory:
        for name, entries in files.items():
            with open(os.path.join(directory, name), "w") as out:
                out.write(table(entries))
        out = subprocess.run([sys.executable, ARGS.tool, directory, *modes],
                             capture_output=True, text=True, timeout=60, check=True)
    return [" ".join(line.split()) for line in out.stdout.splitlines()]


class BenchCompare(unittest.TestCase):
    def test_medians_percentages_fastest_and_counts(self):
        lines = compare(FILES, "head", "new")
        self.assertEqual(lines[0], "batch cuBLAS head new fastest")
        self.assertEqual(lines[1], "8x8x8/2 0.2000 80.0 100.0 new 1.250")
        self.assertEqual(lines[2], "9x9x9/2 0.5000 125.0 200.0! head 1.000")
        self.assertEqual(lines[3], "% of cuBLAS (! a WRONG output); at or above cuBLAS: "
                                   "head 1/2, new 1/2")
        self.assertEqual(len(lines), 4)

    def test_forced_tiles_rows_are_a_mode_of_their_own(self):
        entries = rows(0.2, 0.25, 0.5) + [("8x8x8/2", "tiles_small", 0.2, RIGHT),
                                          ("9x9x9/2", "tiles_small", 0.4, RIGHT),
                                          ("8x8x8/2", "tiles_big", 0.4, RIGHT)]
        lines = compare({"head_1.csv": entries}, "head", "head:small", "head:big")
        self.assertEqual(lines[0], "batch cuBLAS head head:small head:big fastest")
        self.assertEqual(lines[1], "8x8x8/2 0.2000 80.0 100.0 50.0 head:small 1.250")
        self.assertEqual(lines[2], "9x9x9/2 0.5000 100.0 125.0 - head:small 1.250")
        self.assertEqual(lines[3], "% of cuBLAS (! a WRONG output); at or above cuBLAS: "
                                   "head 1/2, head:small 2/2, head:big 0/2")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
