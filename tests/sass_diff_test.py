#!/usr/bin/env python3
"""tools/sass_diff.py on two listings written by hand: a kernel whose instructions moved to other
addresses and encodings but are the same is the same; one with an instruction changed differs; a
kernel only one listing holds is named as such; --rename maps AFTER's names onto BEFORE's, and a
rename without "=" is refused.

Usage: sass_diff_test.py --tool PATH/tools/sass_diff.py
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None

BEFORE = """
        Function : _Z4Samev
        /*0000*/                   MOV R1, c[0x0][0x28] ;    /* 0x00000a0000017a02 */
        /*0010*/                   FFMA R0, R2, R3, R0 ;     /* 0x0000000302007223 */
        Function : _Z7Changedv
        /*0000*/                   LDS.128 R8, [R2] ;
        /*0010*/                   FFMA R5, R9, R3, R5 ;
        Function : _Z4Gonev
        /*0000*/                   EXIT ;
"""
AFTER = """
        Function : _Z7Changedv
        /*0000*/                   LDS.128 R8, [R2+0x10] ;
        /*0010*/                   FFMA R5, R9, R3, R5 ;
        Function : _Z4Samev
        /*0100*/                   MOV   R1, c[0x0][0x28] ;  /* 0x00000a0000017a99 */
        /*0110*/                   FFMA R0, R2,  R3, R0 ;    /* 0x0000000302007299 */
        Function : _Z3Newv
        /*0000*/                   EXIT ;
"""


def run(*flags):
    paths = []
    try:
        for text in (BEFORE, AFTER):
            with tempfile.NamedTemporaryFile("w", suffix=".sass", delete=False) as listing:
                listing.write(text)
            paths.append(listing.name)
        out = subprocess.run([sys.executable, ARGS.tool, *paths, *flags], capture_output=True,
                             text=True, timeout=60, check=True)
    finally:
        for path in paths:
            os.unlink(path)
    return out.stdout.splitlines()


class SassDiff(unittest.TestCase):
    def test_names_what_differs_and_what_one_side_holds(self):
        self.assertEqual(run(), ["2 functions in both, 1 differ, 1 only before, 1 only after",
                                 "  differs: _Z7Changedv", "  only before: _Z4Gonev",
                                 "  only after: _Z3Newv"])

    def test_match_keeps_only_the_named_functions(self):
        self.assertEqual(run("--match", "Same"),
                         ["1 functions in both, 0 differ, 0 only before, 0 only after"])

    def test_rename_pairs_functions_whose_names_changed(self):
        # _Z3Newv, renamed, is _Z4Gonev's same instructions.
        self.assertEqual(run("--rename", "_Z3Newv=_Z4Gonev"),
                         ["3 functions in both, 1 differ, 0 only before, 0 only after",
                          "  differs: _Z7Changedv"])
        self.assertEqual(run("--rename", "Newv=Gonev", "--rename", "_Z3=_Z4"),
                         ["3 functions in both, 1 differ, 0 only before, 0 only after",
                          "  differs: _Z7Changedv"])

    def test_rename_without_an_equals_sign_is_refused(self):
        with self.assertRaises(subprocess.CalledProcessError):
            run("--rename", "_Z3Newv")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest])
