#!/usr/bin/env python3
"""spills.py [BUILD_DIR] [--match TEXT] [--allow TEXT...]: which kernels spill, read from ptxas,
with no GPU.

Compiles each CUDA unit of BUILD_DIR/compile_commands.json (default build; configure with
CMAKE_EXPORT_COMPILE_COMMANDS, as CMakeLists.txt does) once more with -Xptxas=-v into a scratch
object, two units at a time, and prints every kernel whose report shows spill stores or loads,
with its registers, then a count a unit. Exits 1 where any kernel spills but those whose C++ name
contains an --allow TEXT (listed as allowed). --match keeps the units whose path contains TEXT
(the warp-tiled units take minutes each).
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ENTRY = re.compile(
    r"Compiling entry function '(\S+)'.*?(\d+) bytes spill stores, (\d+) bytes spill loads"
    r".*?Used (\d+) registers", re.S)


def report(command, directory, scratch):
    """ptxas's -v report of one unit, compiled into `scratch` instead of its object."""
    args = shlex.split(command)
    args[args.index("-o") + 1] = scratch
    result = subprocess.run(args + ["-Xptxas=-v"], cwd=directory, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"spills.py: the unit did not compile:\n{result.stderr[-2000:]}")
    return result.stderr


def demangle(name):
    """The kernel's C++ name (c++filt's), or `name` where c++filt is missing."""
    try:
        return subprocess.run(["c++filt", "-p", name], capture_output=True, text=True).stdout.strip()
    except FileNotFoundError:
        return name


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--match", default="")
    parser.add_argument("--allow", action="append", default=[])
    options = parser.parse_args()
    with open(os.path.join(options.build, "compile_commands.json")) as listing:
        units = [u for u in json.load(listing)
                 if u["file"].endswith(".cu") and options.match in u["file"]]
    spilled = 0
    with tempfile.TemporaryDirectory() as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        reports = pool.map(
            lambda i: report(units[i]["command"], units[i]["directory"],
                             os.path.join(scratch, f"{i}.o")), range(len(units)))
        for unit, text in zip(units, reports):
            kernels = ENTRY.findall(text)
            spills = 0
            for name, stores, loads, registers in kernels:
                if stores == loads == "0":
                    continue
                name = demangle(name)
                allowed = any(allow in name for allow in options.allow)
                spills += not allowed
                print(f"  {'allowed: ' if allowed else ''}{name}: {stores} bytes stored, "
                      f"{loads} loaded, {registers} registers")
            print(f"{os.path.relpath(unit['file'])}: {len(kernels)} kernels, {spills} spill")
            spilled += spills
    sys.exit(1 if spilled else 0)


if __name__ == "__main__":
    main()
