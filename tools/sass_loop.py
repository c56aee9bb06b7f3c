#!/usr/bin/env python3
"""sass_loop.py LISTING [--match NAME] [--model bank|simple] [--opcodes]: what a kernel's main
loop issues, read from its SASS, with no GPU.

For each function of a `cuobjdump -sass` listing whose name contains NAME (default
SgemmWarpTiledKernel), finds the main loop (the backward branch whose body holds the most FFMAs)
and prints its instruction count, its FFMAs, those that read two or more registers of one bank
(bank = register index % 2) that the operand reuse cache does not supply, the register reads per
FFMA, and the FFMAs that accumulate in place. Register-bank conflicts stall the dispatch of an FFMA
stream; these counts predicted which builds of the warp-tiled kernel run faster (docs/benchmarks.md,
session 10). They are a model, not a measurement: time the change on a GPU.

Reuse models:
  bank    (default) the cache holds one register per operand slot and bank: a read with .reuse
          fills that slot's entry for the register's bank, a read without it or a write to the
          register empties it. cuBLAS's own sm_90 FFMA kernels count 18% here.
  simple  a source is free only if the instruction just before read the same register in the same
          slot with .reuse. cuBLAS counts 77% here, so this model overstates conflicts.

Listings: nvcc -arch=sm_90 -cubin -o k.cubin FILE.cu (with the project's -Xptxas flags), then
cuobjdump -sass k.cubin > k.sass. No cuobjdump here? `pip install nvidia-cuda-cuobjdump` puts one
under site-packages/nvidia/cu13/bin.
"""

import argparse
import collections
import re

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
FUNCTION = re.compile(r"Function : (\S+)")
REGISTER = re.compile(r"^[-|!~]*R(\d+|Z)(\.reuse)?(\.[A-Z0-9_]+)*\|?$")
# Opcodes whose first operand is a source, not a destination.
NO_DESTINATION = ("STS", "STG", "ST", "RED", "ATOM", "BRA")


def parse(path):
    """{function name: [(address, instruction text)]} of a listing."""
    functions = collections.OrderedDict()
    current = None
    with open(path) as listing:
        for line in listing:
            match = FUNCTION.search(line)
            if match:
                current = functions.setdefault(match.group(1), [])
                continue
            match = LINE.search(line)
            if match and current is not None:
                current.append((int(match.group(1), 16), match.group(2).strip()))
    return functions


def split(text):
    """(opcode, operands) of an instruction, its predicate dropped."""
    if text.startswith("@"):
        text = text.split(None, 1)[1]
    parts = text.split(None, 1)
    operands = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
    return parts[0], operands


def registers(operands):
    """[(slot, register or None, reuse)] for operands; RZ and non-registers are None."""
    out = []
    for slot, operand in enumerate(operands):
        match = REGISTER.match(operand)
        if not match or match.group(1) == "Z":
            out.append((slot, None, False))
        else:
            out.append((slot, int(match.group(1)), bool(match.group(2))))
    return out


def main_loop(instructions):
    """(first address, last address, body) of the loop with the most FFMAs, or None."""
    best = None
    for address, text in instructions:
        opcode, operands = split(text)
        if not opcode.startswith("BRA") or not operands:
            continue
        try:
            target = int(operands[-1], 16)
        except ValueError:
            continue
        if target >= address:
            continue
        body = [t for a, t in instructions if target <= a <= address]
        ffmas = sum(1 for t in body if split(t)[0].startswith("FFMA"))
        if best is None or ffmas > best[0]:
            best = (ffmas, target, address, body)
    return best[1:] if best else None


def count(body, model):
    """Counts of the loop: opcodes, FFMAs, conflicting FFMAs, register reads, in place."""
    opcodes = collections.Counter()
    ffmas = conflicts = reads = in_place = 0
    previous = {}  # simple model: slot -> register the instruction before cached
    cache = {}  # bank model: (slot, bank) -> register
    for text in body:
        opcode, operands = split(text)
        base = opcode.split(".")[0]
        opcodes[opcode] += 1
        has_destination = base not in NO_DESTINATION and operands
        sources = registers(operands[1:] if has_destination else operands)
        if base == "FFMA":
            ffmas += 1
            in_place += sources[2][1] is not None and sources[2][1] == int(
                REGISTER.match(operands[0]).group(1))
            read = set()
            for slot, register, _ in sources:
                if register is None:
                    continue
                if model == "simple" and previous.get(slot) == register:
                    continue
                if model == "bank" and cache.get((slot, register % 2)) == register:
                    continue
                read.add(register)
            reads += len(read)
            banks = collections.Counter(r % 2 for r in read)
            conflicts += bool(banks) and max(banks.values()) >= 2
        previous = {slot: r for slot, r, reuse in sources if reuse and r is not None}
        for slot, register, reuse in sources:
            if register is None:
                continue
            if reuse:
                cache[(slot, register % 2)] = register
            else:
                cache.pop((slot, register % 2), None)
        destination = REGISTER.match(operands[0]) if has_destination else None
        if destination and destination.group(1) != "Z":
            first = int(destination.group(1))
            width = 4 if opcode.endswith(".128") else 2 if opcode.endswith(".64") else 1
            for key, register in list(cache.items()):
                if first <= register < first + width:
                    del cache[key]
    return opcodes, ffmas, conflicts, reads, in_place


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("listing", help="output of cuobjdump -sass")
    parser.add_argument("--match", default="SgemmWarpTiledKernel",
                        help="functions whose name contains this")
    parser.add_argument("--model", choices=("bank", "simple"), default="bank")
    parser.add_argument("--opcodes", action="store_true", help="also list the loop's opcodes")
    args = parser.parse_args()
    for name, instructions in parse(args.listing).items():
        if args.match not in name:
            continue
        loop = main_loop(instructions)
        if loop is None:
            continue
        first, last, body = loop
        opcodes, ffmas, conflicts, reads, in_place = count(body, args.model)
        share = 100.0 * conflicts / max(ffmas, 1)
        print(name)
        print(f"  loop 0x{first:x}..0x{last:x}: {len(body)} instructions, {ffmas} FFMA, "
              f"{conflicts} ({share:.1f}%) reading two registers of one bank, "
              f"{reads / max(ffmas, 1):.2f} register reads per FFMA, {in_place} in place")
        if args.opcodes:
            print("  " + ", ".join(f"{k} {v}" for k, v in sorted(opcodes.items())))


if __name__ == "__main__":
    main()
