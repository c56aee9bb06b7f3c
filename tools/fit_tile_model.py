#!/usr/bin/env python3
"""fit_tile_model.py --fit CSV... [--test CSV...] | --crosswise GROUP GROUP...: fits the speeds,
overheads and costs of ModeledBatchTiles (kernels/kernels.cu) to matserve-kernel-bench runs with
--batched_tiles=all, and tests its picks on other runs.

A shape S runs a batch as PlanSplits plans it (kernels.cu): its first problems with K whole, the
rest, if any, with K split in parts. Its modeled time is c(S) * blocks per SM * tile area * (the
whole problems' rounds * (K padded to S's step + overhead(S)) + the split blocks' rounds * (a part
of K + overhead(S) + 32, the split blocks' adds into C, as BatchSplitCount counts them)), times
a factor of S's plans that split: a tail after whole problems, or every problem split. The
rounds of a set of blocks are the busiest SM's, which takes ceil(blocks / SMs) of them: q whole
rounds of blocks per SM and a last round of r more, which takes (r / blocks per SM) / speed(S, r)
of a whole one. speed(S, r) is an SM's pace with r of S's blocks against its pace with all of
them: from r / blocks per SM (r blocks take as long as a whole round) to 1 (as long as their share
of one). overhead(S) is a block's fixed cost (its way in and out) in elements of K. Both are fitted
in two passes, each in turn over a grid (the overheads 0 to 256 in steps of 32, each speed from
its low end to 1), to the least spread of log(measured time / modeled work) within each class and
shape, starting from no overhead and speeds sqrt(r / blocks per SM); then each factor, as exp of
the median of log(measured time / modeled work) over S's batches of that plan less its median over
S's whole plans (where at least 10 batches have that plan; else 1); then c(S) per class of
operands off 16 bytes (both, A alone, B alone), as the median of measured time over modeled work,
relative to 64 x 128 tiles. All are printed in kernels.cu's order. --test picks the shape of least
modeled time for each batch in range and compares its forced row (tiles_NAME) with the rules'
(matserve_batched) of the same run, and with the best forced row (the measure that stands where
matserve_batched is itself a build of the model). Each operand of the bench's input sets starts on
256 bytes, so A's rows lie on 16 bytes where K is a multiple of 4 and B's where N is (before session
66 the sets were packed, and did so in some sets only). A batch whose edges the rules cut into
strips (SgemmBatchEdges) is modeled and picked for by its whole 64s, as ModeledBatchTiles sees it,
and its forced rows force the whole 64s' shape; it is tested, not fitted, as its times hold the
strips'. --crosswise fits on every group of runs (CSVs joined by commas, one seed's, say) but one,
and prints how far the picks lie behind the best forced shape on the one left out, for each in turn:
the check before fresh seeds. The speeds, overheads and costs in kernels.cu are this script's --fit
to the runs in docs/tile_model/fit (its README: the ten groups that docs/benchmarks.md, session 65,
checks crosswise, less the 4 batches whose edges the rules cut; 764 batches, every shape forced).
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
GRID = 20  # steps of each speed's grid
OVERHEADS = range(0, 257, 32)


def ceil_div(a, b):
    return -(-a // b)


def operands_off(k, n):
    """The class of a packed batch, or None where both operands lie on 16 bytes."""
    a_on, b_on = k % 4 == 0, n % 4 == 0
    return None if a_on and b_on else "b" if a_on else "a" if b_on else "both"


def in_range(m, k, n, count, sms):
    """ModeledBatchTiles' range, for the batch as it sees it (m, k, n the sides, n B's pitch)."""
    off = operands_off(k, n) is not None
    m, n = modeled_sides(m, k, n, count, sms)
    return model_takes(m, k, n, count, off, sms)


def model_takes(m, k, n, count, off, sms):
    """ModeledBatchTiles' range test on these sides (off: an operand lies off 16 bytes)."""
    big = ceil_div(m, 128) * ceil_div(n, 128) * count
    return (count > 1 and off and sms <= big <= MAX_ROUNDS * 2 * sms
            and MIN_SIDE <= min(m, n, k) and max(m, n, k) <= MAX_SIDE)


EDGE_TILE, MAX_EDGE, MAX_WIDE_EDGE, MIN_FILL = 64, 4, 16, 0.75  # SgemmBatchEdges, InnerFills
MIN_PADDED_MACS, MIN_MACS_PER_COPIED = 2 ** 32, 512  # SgemmBatch


def wide_padded_area(m, n):
    return min(round_up(m, 64) * round_up(n, 128), round_up(m, 128) * round_up(n, 64))


def modeled_sides(m, k, n, count, sms):
    """(M, N) of the batch that ModeledBatchTiles sees: the whole 64s where SgemmBatch pads
    neither operand and SgemmBatchEdges cuts the edges into strips, else the batch's own. (Only
    batches with an operand off 16 bytes are mirrored: InnerFills counts whole tiles.)"""
    rows, cols = m % EDGE_TILE, n % EDGE_TILE
    inner_m, inner_n = m - rows, n - cols
    macs = m * n * k * count
    padded = (operands_off(k, n) == "both" and count > 1 and macs >= MIN_PADDED_MACS
              and macs >= MIN_MACS_PER_COPIED * count * k * (m + n)
              and not model_takes(m, k, n, count, True, sms))
    cut_cols = cols <= MAX_EDGE or (cols <= MAX_WIDE_EDGE and wide_padded_area(inner_m, inner_n)
                                    < wide_padded_area(m, n))
    cut = (not padded and count > 1 and min(inner_m, inner_n) >= 128 and rows <= MAX_EDGE
           and cut_cols and rows + cols > 0
           and ceil_div(inner_m, 128) * ceil_div(inner_n, 128) * count >= MIN_FILL * sms)
    return (inner_m, inner_n) if cut else (m, n)


def last_rounds():
    """The (shape, r) of every last round of r blocks short of a whole one."""
    return [(shape, r) for shape, (_, _, per_sm, _) in SHAPES.items() for r in range(1, per_sm)]


PLANS = ("tail", "all")  # a split tail after whole problems; every problem split
MIN_PLAN_BATCHES = 10  # the least batches of a shape and plan that fit its factor


def initial_model():
    """{(shape, r): speed}, {shape: overhead} and {(shape, plan): factor} before the fit."""
    return ({(shape, r): math.sqrt(r / SHAPES[shape][2]) for shape, r in last_rounds()},
            dict.fromkeys(SHAPES, 0), {})


def round_up(a, b):
    return ceil_div(a, b) * b


# PlanSplits and the functions it calls (kernels.cu), for shapes whose kernels split K.
MIN_SPLIT_K, MIN_BATCH_SPLIT_K, MAX_SPLIT_K, MOST_SPLITS = 64, 256, 4096, 64
SPLIT_ADDS_K = 32  # a split block's adds into C, in elements of K (BatchSplitCount's kOverheadK)


def rounds_fill(blocks, slots):
    return blocks / (ceil_div(blocks, slots) * slots)


def allowed_splits(k, min_split_k):
    fewest = max(1, ceil_div(k, MAX_SPLIT_K))
    return fewest, max(fewest, min(k // min_split_k, MOST_SPLITS))


def split_count(tiles, k, slots, min_split_k):
    fewest, most = allowed_splits(k, min_split_k)
    fullest = fewest
    for s in range(fewest, most + 1):
        if rounds_fill(tiles * s, slots) >= 0.95:
            return s
        if rounds_fill(tiles * s, slots) > rounds_fill(tiles * fullest, slots):
            fullest = s
    return fullest


def whole_problems(tiles, count, k, slots):
    """(problems with K whole, the least part of K for the rest): UnsplitProblems, then
    SplitsWholeBatch."""
    full_rounds, last_round = divmod(tiles * count, slots)
    unsplit = (count if full_rounds > 4 or 2 * last_round >= slots or k < 256 or 2 * tiles > slots
               else full_rounds * slots // tiles)
    if (unsplit > 0 and rounds_fill(tiles * unsplit, slots) < 0.75
            and split_count(tiles * count, k, slots, MIN_BATCH_SPLIT_K) > 1):
        return 0, MIN_BATCH_SPLIT_K
    return unsplit, MIN_SPLIT_K


def plan_splits(m, k, n, count, shape, sms):
    """(problems with K whole, parts the others split K into) of a batch of count > 1."""
    block_m, block_n, per_sm, step = SHAPES[shape]
    if shape == "big":  # kWholeK
        return count, 1
    slots = sms * per_sm
    tiles = ceil_div(m, block_m) * ceil_div(n, block_n)
    unsplit, min_split_k = whole_problems(tiles, count, k, slots)
    if unsplit == count:
        return count, 1
    fewest, most = allowed_splits(k, min_split_k)

    def rounds_time(s):  # BatchSplitCount
        part = round_up(ceil_div(k, s), step)
        rounds = ceil_div(tiles * (count - unsplit) * ceil_div(k, part), slots)
        return rounds * (part + SPLIT_ADDS_K)
    return unsplit, min(range(fewest, most + 1), key=rounds_time)


def plan_kind(unsplit, splits):
    return "whole" if splits == 1 else "all" if unsplit == 0 else "tail"


def work(m, k, n, count, shape, sms, model):
    speeds, overheads, factors = model
    block_m, block_n, per_sm, step = SHAPES[shape]
    tiles = ceil_div(m, block_m) * ceil_div(n, block_n)

    def rounds(blocks):
        whole, r = divmod(ceil_div(blocks, sms), per_sm)
        return whole + (r / per_sm / speeds[(shape, r)] if r else 0)
    unsplit, splits = plan_splits(m, k, n, count, shape, sms)
    depth = rounds(tiles * unsplit) * (round_up(k, step) + overheads[shape])
    if splits > 1:
        part = round_up(ceil_div(k, splits), step)
        depth += rounds(tiles * (count - unsplit) * splits) * (
            part + overheads[shape] + SPLIT_ADDS_K)
    factor = factors.get((shape, plan_kind(unsplit, splits)), 1.0)
    return factor * per_sm * block_m * block_n * depth


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


def fitted(batches, sms):
    """The batches in range that the rules run whole, as (batch, times): a cut batch's time
    holds its strips', which the model leaves out."""
    return [(batch, times) for batch, times in batches.items() if in_range(*batch, sms)
            and modeled_sides(*batch, sms) == (batch[0], batch[2])]


def residuals(batches, sms, model):
    """(batch, shape, log(measured / modeled work)) of each forced row of the batches fitted."""
    for batch, times in fitted(batches, sms):
        for shape in SHAPES:
            if shape in times:
                yield batch, shape, math.log(times[shape] / work(*batch, shape, sms, model))


def log_ratios(batches, sms, model):
    """{(class, shape): [log(measured / modeled work)]} over the batches fitted."""
    logs = {}
    for (m, k, n, count), shape, log in residuals(batches, sms, model):
        logs.setdefault((operands_off(k, n), shape), []).append(log)
    return logs


def spread(batches, sms, model):
    return sum(statistics.pvariance(x) * len(x)
               for x in log_ratios(batches, sms, model).values())


def fit_grid(batches, sms, model, table, key, values):
    """Sets table[key] to the value of `values` that spreads the batches least (a tie keeps the
    value it has)."""
    best = spread(batches, sms, model)
    kept = table[key]
    for value in values:
        table[key] = value
        trial = spread(batches, sms, model)
        if trial < best:
            best, kept = trial, value
    table[key] = kept


def fit(batches, sms, passes=2):
    """The fitted (speeds, overheads, factors) and {(class, shape): cost}."""
    model = initial_model()
    speeds, overheads, factors = model
    for _ in range(passes):
        for shape in SHAPES:
            fit_grid(batches, sms, model, overheads, shape, OVERHEADS)
        for shape, r in last_rounds():
            low = r / SHAPES[shape][2]
            fit_grid(batches, sms, model, speeds, (shape, r),
                     [low + (1 - low) * i / GRID for i in range(GRID + 1)])
    by_plan = {}
    for batch, shape, log in residuals(batches, sms, model):
        plan = plan_kind(*plan_splits(*batch, shape, sms))
        by_plan.setdefault((shape, plan), []).append(log)
    for (shape, plan), logs in by_plan.items():
        if plan != "whole" and (shape, "whole") in by_plan and len(logs) >= MIN_PLAN_BATCHES:
            factors[(shape, plan)] = math.exp(statistics.median(logs) -
                                              statistics.median(by_plan[(shape, "whole")]))
    logs = log_ratios(batches, sms, model)
    costs = {}
    for cls in CLASSES:
        if (cls, "wide") in logs:
            wide = statistics.median(logs[(cls, "wide")])
            for shape in SHAPES:
                costs[(cls, shape)] = math.exp(statistics.median(logs[(cls, shape)]) - wide)
    return model, costs


def pick(model, costs, m, k, n, count, sms):
    """The shape of least modeled time for the batch that ModeledBatchTiles sees."""
    cls = operands_off(k, n)
    m, n = modeled_sides(m, k, n, count, sms)
    return min(SHAPES,
               key=lambda shape: costs[(cls, shape)] * work(m, k, n, count, shape, sms, model))


def tested(costs, batches, sms):
    """The batches in range whose class of operands the costs cover, as (batch, times)."""
    classes = {cls for cls, _ in costs}
    return [((m, k, n, count), times) for (m, k, n, count), times in batches.items()
            if in_range(m, k, n, count, sms) and operands_off(k, n) in classes]


def behind_best(picked, times):
    """log(the picked shape's forced time / the best forced shape's)."""
    return math.log(picked / min(times[shape] for shape in SHAPES))


def percent(logs):
    """The geometric mean of exp(logs), as a percentage above 1."""
    return 100 * (math.exp(sum(logs) / len(logs)) - 1)


def test(model, costs, batches, sms):
    logs, gaps, ahead, behind, at_or_above = [], [], 0, 0, [0, 0]
    for batch, times in tested(costs, batches, sms):
        picked = times[pick(model, costs, *batch, sms)]
        gaps.append(behind_best(picked, times))
        ratio = times["rules"] / picked
        logs.append(math.log(ratio))
        ahead += ratio > 1.02
        behind += ratio < 0.98
        at_or_above[0] += times["rules"] <= times["cublas"]
        at_or_above[1] += picked <= times["cublas"]
    print(f"in range: {len(logs)} batches; the model against the rules: geometric mean "
          f"{math.exp(sum(logs) / len(logs)):.4f}, over 2% ahead {ahead}, over 2% behind {behind}; "
          f"at or above cuBLAS: rules {at_or_above[0]}, model {at_or_above[1]}; behind the best "
          f"forced shape by {percent(gaps):.2f}% (geometric mean)")


def crosswise(groups, sms):
    """For each group (CSVs joined by commas), fits on the other groups and prints how far the
    picks lie behind the best forced shape on it; then over every group's batches."""
    loaded = [load(group.split(",")) for group in groups]
    every = []
    for left_out, group in enumerate(groups):
        rest = {batch: times for i, batches in enumerate(loaded) if i != left_out
                for batch, times in batches.items()}
        model, costs = fit(rest, sms)
        logs = [behind_best(times[pick(model, costs, *batch, sms)], times)
                for batch, times in tested(costs, loaded[left_out], sms)]
        every += logs
        print(f"{group}: {len(logs)} batches in range, behind the best forced shape by "
              f"{percent(logs):.2f}%" if logs else f"{group}: no batches in range")
    if every:
        print(f"all: {len(every)} batches, behind the best forced shape by {percent(every):.2f}% "
              f"(geometric mean)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--fit", nargs="+")
    what.add_argument("--crosswise", nargs="+", metavar="GROUP",
                      help="CSVs joined by commas; at least two groups")
    parser.add_argument("--test", nargs="*", default=[])
    parser.add_argument("--sms", type=int, default=132)
    args = parser.parse_args()
    if args.crosswise:
        if len(args.crosswise) < 2 or args.test:
            parser.error("--crosswise takes at least two groups, and no --test")
        crosswise(args.crosswise, args.sms)
        return
    model, costs = fit(load(args.fit), args.sms)
    speeds, overheads, factors = model
    print("overhead, then the speed of a last round of r blocks")
    for shape, (_, _, per_sm, _) in SHAPES.items():
        print(f"{shape:<12} {overheads[shape]:8d} " +
              " ".join(f"{speeds[(shape, r)]:8.4f}" for r in range(1, per_sm)))
    print("plans that split " + " ".join(f"{plan:>8}" for plan in PLANS))
    for shape in SHAPES:
        if shape != "big":
            print(f"{shape:<16} " + " ".join(f"{factors.get((shape, plan), 1.0):8.4f}"
                                             for plan in PLANS))
    print("off 16 bytes " + " ".join(f"{shape:>8}" for shape in SHAPES))
    for cls in CLASSES:
        if (cls, "wide") in costs:
            print(f"{cls:<12} " + " ".join(f"{costs[(cls, shape)]:8.4f}" for shape in SHAPES))
    if args.test:
        test(model, costs, load(args.test), args.sms)


if __name__ == "__main__":
    main()
