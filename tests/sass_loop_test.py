#!/usr/bin/env python3
"""tools/sass_loop.py on a listing written by hand: which loop it takes for the main one, and how
soon that loop reads what its shared-memory loads bring (--reads), counted around the loop's end.

Usage: sass_loop_test.py --tool PATH/tools/sass_loop.py
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None

# A kernel whose outer loop (0x0010..0x0100) holds a spin loop without FFMAs (0x0030..0x0040) and
# the main loop (0x0050..0x00f0). In the main loop, the LDS.128 into R8..R11 is read 3
# instructions later (the FFMA reading R9); the LDS into R20 is first read by the FFMA at the
# loop's top, 2 instructions later around the end; the predicated-off LDS counts for nothing, and
# so does the LDS into R30, overwritten before the FFMA that reads R30.
LISTING = """
        Function : _Z6KernelPf
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   FFMA R0, R2, R3, R0 ;
        /*0020*/                   IADD3 R4, R4, 0x1, RZ ;
        /*0030*/                   NOP ;
        /*0040*/              @!P0 BRA 0x30 ;
        /*0050*/                   FFMA R5, R20.reuse, R3, R5 ;
        /*0060*/                   LDS.128 R8, [R2] ;
        /*0070*/                   IADD3 R4, R4, 0x1, RZ ;
        /*0080*/                   IADD3 R7, R7, 0x1, RZ ;
        /*0090*/                   FFMA R6, R9, R3, R6 ;
        /*00a0*/              @!PT LDS RZ, [RZ] ;
        /*00b0*/                   LDS R30, [R2+0x20] ;
        /*00c0*/                   MOV R30, RZ ;
        /*00d0*/                   FFMA R7, R30, R3, R7 ;
        /*00e0*/                   LDS R20, [R2+0x10] ;
        /*00f0*/              @!P1 BRA 0x50 ;
        /*0100*/              @!P2 BRA 0x10 ;
        /*0110*/                   EXIT ;
"""


def run(*flags):
    with tempfile.NamedTemporaryFile("w", suffix=".sass", delete=False) as listing:
        listing.write(LISTING)
    try:
        out = subprocess.run([sys.executable, ARGS.tool, listing.name, "--match", "Kernel", *flags],
                             capture_output=True, text=True, timeout=60, check=True)
    finally:
        os.unlink(listing.name)
    return out.stdout.splitlines()


class SassLoop(unittest.TestCase):
    def test_main_loop_is_the_innermost_with_ffmas(self):
        lines = run()
        self.assertEqual(lines[0], "_Z6KernelPf")
        self.assertTrue(lines[1].startswith("  loop 0x50..0xf0: 11 instructions, 3 FFMA,"),
                        lines[1])
        self.assertEqual(len(lines), 2)

    def test_reads_count_around_the_loop_end(self):
        lines = run("--reads")
        self.assertEqual(lines[2], "  2 LDS, read after 2 instructions at least, 3 at the median; "
                                   "2 under 16, 2 under 32")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
