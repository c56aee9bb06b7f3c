#!/usr/bin/env python3
"""random_batches.py --seed N [--count C] [--rows ROWS]: a seeded list of
random strided batches (MxKxNxCOUNT, comma-separated) for matserve-kernel-bench --batched=, to
test a rule on batches it was not drawn from.

Sides M, K and N lie in [260, 1100]; with --rows odd (the default) K and N are odd, so that both
operands go element by element in rows an odd number of elements apart; with --rows vector they are
multiples of 4, on 16 bytes; with --rows a_odd K is odd and N a multiple of 4 (A element by
element, B on 16 bytes), with --rows b_odd the other way round (B and C element by element), where
rules that read one operand's alignment differ (session 61: three-stage two-warp tiles where A
alone is off 16 bytes). With --rows pairs, a_pairs and b_pairs, those sides lie 2 past a multiple
of 4 in place of odd: rows on 8 bytes, which most warp-tiled kernels copy in pairs (kPairsOfA and
kPairsOfB in kernels/launch.h). A seed's odd and vector lists stay as they were before the others
came. M lies off 1-4 past a multiple of 64 and N off 1-16, where the rules cut a batch's edges into
strips (SgemmBatchEdges); with --edges cut, M lies 1-4 past and N at most 4 past, so that the rules
cut them (where the whole 64s fill a round) and run the whole 64s as a batch of their own, in the
shape the model picks for them or, in forced rows (--batched_tiles), the shape forced. Each
batch's count gives it 100 to 1100 tiles of 128 x 128, 0.4 to 4 rounds of them two to an SM on a
GPU of 132 SMs. --sides LOW:HIGH and --tiles LOW:HIGH draw from other ranges (a corner of a model's
range, say); the defaults draw as before they came.
docs/benchmarks.md, session 56, tested its rule on the 40 of --seed 57 and the 46 of --seed 58;
session 64 the cost model on --seed 91 and 92 with --rows pairs, a_pairs and b_pairs.
"""

import argparse
import math
import random

SIDES, TILES = (260, 1100), (100, 1100)


def odd(generator, sides):
    return generator.randrange(sides[0], sides[1] + 1) | 1


def vector(generator, sides):
    return generator.randrange(-(-sides[0] // 4), sides[1] // 4 + 1) * 4


def pairs(generator, sides):
    return generator.randrange(-(-(sides[0] - 2) // 4), (sides[1] - 2) // 4 + 1) * 4 + 2


# --rows: how K and N (the pitches of A and B) are drawn.
ROWS = {"odd": (odd, odd), "vector": (vector, vector), "a_odd": (odd, vector),
        "b_odd": (vector, odd), "pairs": (pairs, pairs), "a_pairs": (pairs, vector),
        "b_pairs": (vector, pairs)}


def batches(seed, count, rows, sides=SIDES, all_tiles=TILES, edges="whole"):
    generator = random.Random(seed)
    draw_k, draw_n = ROWS[rows]
    result = []
    while len(result) < count:
        m = generator.randrange(sides[0], sides[1] + 1)
        k = draw_k(generator, sides)
        n = draw_n(generator, sides)
        if edges == "cut":
            keep = 1 <= m % 64 <= 4 and n % 64 <= 4
        else:  # none that SgemmBatchEdges might cut
            keep = not (1 <= m % 64 <= 4 or 1 <= n % 64 <= 16)
        if not keep:
            continue
        tiles = math.ceil(m / 128) * math.ceil(n / 128)
        problems = max(2, round(generator.uniform(*all_tiles) / tiles))
        result.append((m, k, n, problems))
    return result


def span(text):
    low, high = map(int, text.split(":"))
    if not 0 < low <= high:
        raise argparse.ArgumentTypeError(f"{text}: LOW:HIGH with 0 < LOW <= HIGH")
    return low, high


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--rows", choices=ROWS, default="odd")
    parser.add_argument("--sides", type=span, default=SIDES, help="LOW:HIGH of M, K and N")
    parser.add_argument("--tiles", type=span, default=TILES,
                        help="LOW:HIGH of a batch's 128 x 128 tiles (its count at least 2)")
    parser.add_argument("--edges", choices=("whole", "cut"), default="whole",
                        help="cut: M 1-4 past a multiple of 64 and N at most 4 past, whose edges "
                             "the rules cut into strips")
    args = parser.parse_args()
    print(",".join("x".join(map(str, batch)) for batch in batches(
        args.seed, args.count, args.rows, args.sides, args.tiles, args.edges)))


if __name__ == "__main__":
    main()
