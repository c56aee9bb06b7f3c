#!/usr/bin/env python3
"""sass_diff.py BEFORE AFTER [--match NAME]: which kernels a change touched, read from two SASS
listings (`cuobjdump -sass`) of the same unit, with no GPU.

Compares the functions whose names contain NAME (default: all) instruction by instruction, with
addresses, encodings and spacing left out, and prints how many there are, then each that differs
and each that only one listing holds. A change whose other kernels come out identical needs timing
only where they differ (docs/benchmarks.md, sessions 52 and 53). Exits 0 either way.
"""

import argparse

from sass_loop import parse


def functions(path):
    """{function name: its instructions, spacing normalised} of a listing."""
    return {name: [" ".join(text.split()) for _, text in instructions]
            for name, instructions in parse(path).items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", help="cuobjdump -sass listing before the change")
    parser.add_argument("after", help="cuobjdump -sass listing after it")
    parser.add_argument("--match", default="", help="functions whose name contains this")
    args = parser.parse_args()
    before = {k: v for k, v in functions(args.before).items() if args.match in k}
    after = {k: v for k, v in functions(args.after).items() if args.match in k}
    both = sorted(before.keys() & after.keys())
    changed = [name for name in both if before[name] != after[name]]
    print(f"{len(both)} functions in both, {len(changed)} differ, "
          f"{len(before.keys() - after.keys())} only before, "
          f"{len(after.keys() - before.keys())} only after")
    for name in changed:
        print(f"  differs: {name}")
    for name in sorted(before.keys() - after.keys()):
        print(f"  only before: {name}")
    for name in sorted(after.keys() - before.keys()):
        print(f"  only after: {name}")


if __name__ == "__main__":
    main()
