#!/usr/bin/env python3
"""sass_diff.py BEFORE AFTER [--match NAME] [--rename FROM=TO ...]: which kernels a change touched,
read from two SASS listings (`cuobjdump -sass`) of the same unit, with no GPU.

Compares the functions whose names contain NAME (default: all) instruction by instruction, with
addresses, encodings and spacing left out, and prints how many there are, then each that differs
and each that only one listing holds. A change whose other kernels come out identical needs timing
only where they differ (docs/benchmarks.md, sessions 52 to 54). --rename replaces FROM with TO in
AFTER's names first: a template parameter added with a default value renames every instance (a
bool's default at the end of SgemmWarpTiledKernel's list: --rename ELb0EEEvlll=EEEvlll). Exits 0
either way.
"""

import argparse

from sass_loop import parse


def functions(path, renames=()):
    """{function name, each (FROM, TO) of renames replaced in turn: its instructions, spacing
    normalised} of a listing."""
    def renamed(name):
        for old, new in renames:
            name = name.replace(old, new)
        return name
    return {renamed(name): [" ".join(text.split()) for _, text in instructions]
            for name, instructions in parse(path).items()}


def rename(text):
    """FROM=TO as a pair."""
    old, sep, new = text.partition("=")
    if not sep or not old:
        raise argparse.ArgumentTypeError(f"expected FROM=TO, got {text!r}")
    return old, new


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", help="cuobjdump -sass listing before the change")
    parser.add_argument("after", help="cuobjdump -sass listing after it")
    parser.add_argument("--match", default="", help="functions whose name contains this")
    parser.add_argument("--rename", type=rename, action="append", default=[],
                        metavar="FROM=TO", help="replace FROM with TO in AFTER's names")
    args = parser.parse_args()
    before = {k: v for k, v in functions(args.before).items() if args.match in k}
    after = {k: v for k, v in functions(args.after, args.rename).items() if args.match in k}
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
