#!/usr/bin/env python3
"""bench_compare.py DIR MODE...: matserve-kernel-bench's batched rows from several builds or
switches ("modes"), each run in one or more rounds, side by side.

Reads DIR/MODE_ROUND.csv (`--csv=` of each run) and prints, batch by batch in the order first seen,
cuBLAS's strided batch (the median over every process), each mode's median as % of cuBLAS (a "!"
where an output was WRONG in some round), and the fastest mode with its speedup over the first. The
last line counts the batches each mode runs at or above cuBLAS with every output right. The bench
times cuBLAS in every process, so the modes compare against the same reference (docs/benchmarks.md,
sessions 55 and 56).

A mode MODE:TILES reads the rows `tiles_TILES` of MODE's files instead (`--batched_tiles=TILES`:
that warp-tiled shape forced on the whole batch), so that one run compares the rules' choice with
the shapes they choose among: `bench_compare.py DIR head head:small head:mid`.
"""

import argparse
import csv
import glob
import os
import statistics

WRONG = 1e-5  # the bench's own bound on the normwise relative error


def load(directory, modes):
    """({(batch, mode): [ms, ...]}, {batch: [cuBLAS ms, ...]}, batches in order, {wrong (batch,
    mode)})."""
    ours, ref, order, wrong = {}, {}, [], set()
    for mode in modes:
        files, _, tiles = mode.partition(":")
        for path in sorted(glob.glob(os.path.join(directory, files + "_*.csv"))):
            with open(path, newline="") as table:
                for row in csv.DictReader(table):
                    if row["kind"] != "batched" or not row["ms"]:
                        continue
                    batch = row["shape"]
                    if batch not in order:
                        order.append(batch)
                    if row["impl"].startswith("cublas"):
                        ref.setdefault(batch, []).append(float(row["ms"]))
                    elif (row["impl"] == "tiles_" + tiles if tiles else
                          row["impl"].startswith("matserve")):
                        ours.setdefault((batch, mode), []).append(float(row["ms"]))
                        if row["rel_error"] and float(row["rel_error"]) > WRONG:
                            wrong.add((batch, mode))
    return ours, ref, order, wrong


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("modes", nargs="+")
    args = parser.parse_args()
    ours, ref, order, wrong = load(args.directory, args.modes)
    width = max(7, *(len(mode) for mode in args.modes))
    print(f"{'batch':<22} {'cuBLAS':>7}" + "".join(f" {m:>{width}}" for m in args.modes) +
          "  fastest")
    at_or_above = dict.fromkeys(args.modes, 0)
    for batch in order:
        if batch not in ref:
            continue
        cublas = statistics.median(ref[batch])
        line = f"{batch:<22} {cublas:7.4f}"
        times = {}
        for mode in args.modes:
            if (batch, mode) not in ours:
                line += f" {'-':>{width}}"
                continue
            ms = statistics.median(ours[(batch, mode)])
            right = (batch, mode) not in wrong
            at_or_above[mode] += right and ms <= cublas
            line += f" {100 * cublas / ms:>{width - 1}.1f}{' ' if right else '!'}"
            if right:
                times[mode] = ms
        first = args.modes[0]
        if times and first in times:
            fastest = min(times, key=times.get)
            line += f"  {fastest} {times[first] / times[fastest]:.3f}"
        print(line)
    print("% of cuBLAS (! a WRONG output); at or above cuBLAS: " +
          ", ".join(f"{mode} {at_or_above[mode]}/{len(order)}" for mode in args.modes))


if __name__ == "__main__":
    main()
