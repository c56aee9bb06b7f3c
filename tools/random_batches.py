#!/usr/bin/env python3
"""random_batches.py --seed N [--count C] [--rows odd|vector|a_odd|b_odd]: a seeded list of
random strided batches (MxKxNxCOUNT, comma-separated) for matserve-kernel-bench --batched=, to
test a rule on batches it was not drawn from.

Sides M, K and N lie in [260, 1100]; with --rows odd (the default) K and N are odd, so that both
operands go element by element in rows an odd number of elements apart; with --rows vector they are
multiples of 4, on 16 bytes; with --rows a_odd K is odd and N a multiple of 4 (A element by
element, B on 16 bytes), with --rows b_odd the other way round (B and C element by element), where
rules that read one operand's alignment differ (session 61: three-stage two-warp tiles where A
alone is off 16 bytes). A seed's odd and vector lists stay as they were before a_odd and b_odd
came. M lies off 1-4 past a multiple of 64 and N off 1-16, where the rules cut a batch's edges into
strips (SgemmBatchEdges). Each batch's count gives it 100 to 1100 tiles of 128 x 128, 0.4 to 4
rounds of them two to an SM on a GPU of 132 SMs. docs/benchmarks.md, session 56, tested its rule
on the 40 of --seed 57 and the 46 of --seed 58.
"""

import argparse
import math
import random

LOW, HIGH = 260, 1100


def odd(generator):
    return generator.randrange(LOW, HIGH + 1) | 1


def vector(generator):
    return generator.randrange(LOW // 4, HIGH // 4 + 1) * 4


def batches(seed, count, rows):
    generator = random.Random(seed)
    result = []
    while len(result) < count:
        m = generator.randrange(LOW, HIGH + 1)
        k = odd(generator) if rows in ("odd", "a_odd") else vector(generator)
        n = odd(generator) if rows in ("odd", "b_odd") else vector(generator)
        if 1 <= m % 64 <= 4 or 1 <= n % 64 <= 16:
            continue
        tiles = math.ceil(m / 128) * math.ceil(n / 128)
        problems = max(2, round(generator.uniform(100, 1100) / tiles))
        result.append((m, k, n, problems))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--rows", choices=("odd", "vector", "a_odd", "b_odd"), default="odd")
    args = parser.parse_args()
    print(",".join("x".join(map(str, batch))
                   for batch in batches(args.seed, args.count, args.rows)))


if __name__ == "__main__":
    main()
