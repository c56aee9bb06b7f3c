#!/usr/bin/env python3
"""fit_tile_model.py --fit CSV... [--test CSV...]: fits the costs of ModeledBatchTiles
(kernels/kernels.cu) to matserve-kernel-bench runs with --batched_tiles=all, and tests its picks
against the rules on other runs.

A shape S's modeled time is c(S) * (w + sqrt(f)) * blocks per SM * tile area * K padded to S's
step, where S's tiles fill w whole rounds of the GPU's blocks and a fraction f of one more. c(S) is
fitted per class of operands off 16 bytes (both, A alone, B alone) as the median of measured time
over the rest, and printed relative to 64 x 128 tiles, in kernels.cu's order. --test picks the shape
of least modeled time for each batch in range and compares its forced row (tiles_NAME) with the
rules' (matserve_batched) of the same run. The bench's operands are packed, so A's rows lie on 16
bytes where K is a multiple of 4 and B's where N is. The costs in kernels.cu were fitted before
the range had its bound on rounds (--fit_max_rounds=0) on run276's seeds 81 and 82
(docs/benchmarks.md, session 62).
"""

import argparse
import csv
import math
import statistics

# name: (block M, block N, blocks per SM, K step), as kernels/launch.h's shapes.
SHAPES = {"small": (64, 64, 6, 16), "quad_few": (64, 64, 4, 16), "mid": (96, 96, 4, 8),
          "wide": (64, 128, 3, 16), "big": (128, 128, 2, 32)}
CLASSES = ("both", "a", "b")  # which operands are off 16 bytes
MIN_SIDE, MAX_SIDE, MAX_ROUNDS = 260, 1100, 4


def ceil_div(a, b):
    return -(-a // b)


def operands_off(k, n):
    """The class of a packed batch, or None where both operands lie on 16 bytes."""
    a_on, b_on = k % 4 == 0, n % 4 == 0
    return None if a_on and b_on else "b" if a_on else "a" if b_on else "both"


def in_range(m, k, n, count, sms, max_rounds=MAX_ROUNDS):
    """ModeledBatchTiles' range; max_rounds 0 puts no bound on the 128 x 128 tiles' rounds."""
    big = ceil_div(m, 128) * ceil_div(n, 128) * count
    return (count > 1 and operands_off(k, n) is not None and sms <= big
            and (max_rounds == 0 or big <= max_rounds * 2 * sms)
            and MIN_SIDE <= min(m, n, k) and max(m, n, k) <= MAX_SIDE)


def work(m, k, n, count, shape, sms):
    block_m, block_n, per_sm, step = SHAPES[shape]
    rounds = ceil_div(m, block_m) * ceil_div(n, block_n) * count / (sms * per_sm)
    whole = math.floor(rounds)
    return (whole + math.sqrt(rounds - whole)) * per_sm * block_m * block_n * ceil_div(k, step) * step


def load(paths):
    """{(m, k, n, count): {"cublas" | "rules" | shape: ms}} of the batched rows."""
    batches = {}
    for path in paths:
        with open(path, newline="") as table:
            for row in csv.DictReader(table):
                if row["kind"] != "batched" or not row["ms"]:
                    continue
                impl = row["impl"]
                key = ("cublas" if impl.startswith("cublas") else
                       "rules" if impl == "matserve_batched" else
                       impl[len("tiles_"):] if impl.startswith("tiles_") else None)
                if key is None:
                    continue
                sides, count = row["shape"].split("/")
                m, k, n = map(int, sides.split("x"))
                batches.setdefault((m, k, n, int(count)), {})[key] = float(row["ms"])
    return batches


def fit(batches, sms, max_rounds):
    ratios = {}
    for (m, k, n, count), times in batches.items():
        if not in_range(m, k, n, count, sms, max_rounds):
            continue
        for shape in SHAPES:
            if shape in times:
                ratios.setdefault((operands_off(k, n), shape), []).append(
                    times[shape] / work(m, k, n, count, shape, sms))
    costs = {}
    for cls in CLASSES:
        if (cls, "wide") in ratios:
            wide = statistics.median(ratios[(cls, "wide")])
            for shape in SHAPES:
                costs[(cls, shape)] = statistics.median(ratios[(cls, shape)]) / wide
    return costs


def pick(costs, m, k, n, count, sms):
    cls = operands_off(k, n)
    return min(SHAPES, key=lambda shape: costs[(cls, shape)] * work(m, k, n, count, shape, sms))


def test(costs, batches, sms):
    logs, ahead, behind, at_or_above = [], 0, 0, [0, 0]
    for (m, k, n, count), times in batches.items():
        if not in_range(m, k, n, count, sms) or operands_off(k, n) not in {c for c, _ in costs}:
            continue
        picked = times[pick(costs, m, k, n, count, sms)]
        ratio = times["rules"] / picked
        logs.append(math.log(ratio))
        ahead += ratio > 1.02
        behind += ratio < 0.98
        at_or_above[0] += times["rules"] <= times["cublas"]
        at_or_above[1] += picked <= times["cublas"]
    print(f"in range: {len(logs)} batches; the model against the rules: geometric mean "
          f"{math.exp(sum(logs) / len(logs)):.4f}, over 2% ahead {ahead}, over 2% behind {behind}; "
          f"at or above cuBLAS: rules {at_or_above[0]}, model {at_or_above[1]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", nargs="+", required=True)
    parser.add_argument("--test", nargs="*", default=[])
    parser.add_argument("--sms", type=int, default=132)
    parser.add_argument("--fit_max_rounds", type=int, default=MAX_ROUNDS,
                        help="the fit's bound on rounds of 128 x 128 tiles (0: none)")
    args = parser.parse_args()
    costs = fit(load(args.fit), args.sms, args.fit_max_rounds)
    print("off 16 bytes " + " ".join(f"{shape:>8}" for shape in SHAPES))
    for cls in CLASSES:
        if (cls, "wide") in costs:
            print(f"{cls:<12} " + " ".join(f"{costs[(cls, shape)]:8.3f}" for shape in SHAPES))
    if args.test:
        test(costs, load(args.test), args.sms)


if __name__ == "__main__":
    main()
