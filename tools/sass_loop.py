#!/usr/bin/env python3
"""sass_loop.py LISTING [--match NAME] [--model bank|simple] [--opcodes] [--reads]: what a
kernel's main loop issues, read from its SASS, with no GPU.

For each function of a `cuobjdump -sass` listing whose name contains NAME (default
SgemmWarpTiledKernel), finds the main loop (of the backward branches over FFMAs whose bodies hold
no other such branch, the one with the most FFMAs) and prints its instruction count, its FFMAs,
those that read two or more registers of one bank (bank = register index % 2) that the operand
reuse cache does not supply, the register reads per FFMA, and the FFMAs that accumulate in place.
Register-bank conflicts stall the dispatch of an FFMA stream; these counts predicted which builds
of the warp-tiled kernel run faster (docs/benchmarks.md, session 10). They are a model, not a
measurement: time the change on a GPU.

Reuse models:
  bank    (default) the cache holds one register per operand slot and bank: a read with .reuse
          fills that slot's entry for the register's bank, a read without it or a write to the
          register empties it. cuBLAS's own sm_90 FFMA kernels count 18% here.
  simple  a source is free only if the instruction just before read the same register in the same
          slot with .reuse. cuBLAS counts 77% here, so this model overstates conflicts.

With --reads, also the distance of each shared-memory load (LDS) of the loop to the first
instruction that reads what it loaded, in instructions (around the loop's end into its top): a load
read too soon stalls its warp on the short scoreboard unless other warps issue meanwhile. cuBLAS's
SIMT loop (cutlass_80_simt_sgemm_grouped_128x128_8x4_align1 in libcublas, sm_90) reads its loads
51 instructions later at least, 169 at the median; the warp-tiled kernel's 128 x 128 tiles two to
an SM 9 and 36, and at 7 and 68 (A staged by columns, read a K index ahead) they ran no faster
(docs/benchmarks.md, session 53).

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
    """(first address, last address, body) of the innermost loop with FFMAs (one that holds no
    other) with the most FFMAs, or None."""
    loops = []
    for address, text in instructions:
        opcode, operands = split(text)
        if not opcode.startswith("BRA") or not operands:
            continue
        try:
            target = int(operands[-1], 16)
        except ValueError:
            continue
        if target < address:
            loops.append((target, address))

    def ffmas(target, address):
        return sum(1 for a, t in instructions
                   if target <= a <= address and split(t)[0].startswith("FFMA"))

    loops = [(t, a) for t, a in loops if ffmas(t, a) > 0]
    best = None
    for target, address in loops:
        if any(target <= t and a <= address and (t, a) != (target, address) for t, a in loops):
            continue
        count = ffmas(target, address)
        if best is None or count > best[0]:
            body = [t for a, t in instructions if target <= a <= address]
            best = (count, target, address, body)
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


def read_distances(body):
    """For each shared-memory load of the loop body, the instructions to the first that reads
    its destination, counted around the loop's end; a load overwritten before any read counts
    for nothing."""
    distances = []
    for i, text in enumerate(body):
        opcode, operands = split(text)
        if not opcode.startswith("LDS") or text.startswith("@!PT") or not operands:
            continue
        destination = REGISTER.match(operands[0])
        if not destination or destination.group(1) == "Z":
            continue
        first = int(destination.group(1))
        width = 4 if opcode.endswith(".128") else 2 if opcode.endswith(".64") else 1
        loaded = set(range(first, first + width))
        for step in range(1, len(body) + 1):
            later_opcode, later_operands = split(body[(i + step) % len(body)])
            has_destination = later_opcode.split(".")[0] not in NO_DESTINATION
            sources = later_operands[1:] if has_destination else later_operands
            if any(r in loaded for _, r, _ in registers(sources) if r is not None):
                distances.append(step)
                break
            written = REGISTER.match(later_operands[0]) if has_destination and later_operands \
                else None
            if written and written.group(1) != "Z":
                start = int(written.group(1))
                size = 4 if later_opcode.endswith(".128") else 2 if later_opcode.endswith(
                    ".64") else 1
                if loaded & set(range(start, start + size)):
                    break  # overwritten before any read: the load has no reader
    return distances


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("listing", help="output of cuobjdump -sass")
    parser.add_argument("--match", default="SgemmWarpTiledKernel",
                        help="functions whose name contains this")
    parser.add_argument("--model", choices=("bank", "simple"), default="bank")
    parser.add_argument("--opcodes", action="store_true", help="also list the loop's opcodes")
    parser.add_argument("--reads", action="store_true",
                        help="also how soon the loop reads what its LDS load")
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
        distances = sorted(read_distances(body)) if args.reads else []
        if distances:
            print(f"  {len(distances)} LDS, read after {distances[0]} instructions at least, "
                  f"{distances[len(distances) // 2]} at the median; "
                  f"{sum(d < 16 for d in distances)} under 16, {sum(d < 32 for d in distances)} "
                  f"under 32")


if __name__ == "__main__":
    main()
