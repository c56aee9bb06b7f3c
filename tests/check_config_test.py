#!/usr/bin/env python3
"""matserve-server --check_config: every flag checked without starting anything; a bad flag (an
unknown one, a wrong value, a stray argument) exits 2 with a message naming it, with or without
--check_config.

Usage: check_config_test.py --server PATH/matserve-server
"""
import argparse
import socket
import subprocess
import sys
import unittest

ARGS = None


def server(*flags):
    return subprocess.run([ARGS.server, *flags], capture_output=True, text=True, timeout=60)


class CheckConfig(unittest.TestCase):
    def test_good_flags_exit_0_and_start_nothing(self):
        # A port that is taken: a server that started would fail to listen on it.
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            for flags in ([],
                          ["--address=127.0.0.1:%d" % port, "--metrics_address=127.0.0.1:%d" % port,
                           "--backend=cuda", "--devices=0,1", "--streams=2",
                           "--sgemm_variant=register_blocked", "--transpose_variant=wide",
                           "--max_message_bytes=2147483647", "--max_elements=1",
                           "--max_queue_requests=1", "--max_queue_bytes=1",
                           "--max_batch_size=1", "--max_batch_bytes=1", "--max_queue_delay_us=0",
                           "--hold_rule=device_busy", "--shutdown_grace=0s"],
                          ["--address=unix:/tmp/matserve.sock", "--metrics_address="]):
                with self.subTest(flags=flags):
                    run = server("--check_config", *flags)
                    self.assertEqual((run.returncode, run.stdout, run.stderr), (0, "", ""))

    def test_bad_flags_exit_2_with_a_message(self):
        cases = [
            (["--address=50051"], "--address=50051: expected host:port"),
            (["--address=0.0.0.0:65536"], "with a port in [0, 65535]"),
            (["--metrics_address=unix:/tmp/m"], "--metrics_address=unix:/tmp/m: expected host:port"),
            (["--backend=gpu"], "--backend=gpu: expected auto, cuda or cpu"),
            (["--streams=0"], "--streams=0: must be >= 1"),
            (["--devices=0,x"], '--devices: "x" is not a device ordinal'),
            (["--sgemm_variant=fastest"], "--sgemm_variant=fastest: expected auto, naive"),
            (["--transpose_variant=naive"], "--transpose_variant=naive: expected auto, tiled"),
            (["--max_message_bytes=0"], "--max_message_bytes=0: must be in [1, 2^31 - 1]"),
            (["--max_message_bytes=2147483648"], "must be in [1, 2^31 - 1]"),
            (["--max_elements=0"], "--max_elements must be at least 1"),
            (["--max_queue_requests=0"], "--max_queue_requests must be at least 1"),
            (["--max_queue_bytes=0"], "--max_queue_bytes must be at least 1"),
            (["--max_batch_size=0"], "--max_batch_size must be at least 1"),
            (["--max_batch_bytes=0"], "--max_batch_bytes must be at least 1"),
            (["--max_queue_delay_us=-1"], "--max_queue_delay_us must be >= 0"),
            (["--hold_rule=always"], "--hold_rule=always: expected adaptive, device_busy or"),
            (["--shutdown_grace=-1s"], "--shutdown_grace must not be negative"),
            (["--no_such_flag=1"], "Unknown command line flag 'no_such_flag'"),
            (["--streams=four"], "Illegal value 'four' specified for flag 'streams'"),
            (["backend=cuda"], 'unexpected argument "backend=cuda"'),
        ]
        for flags, message in cases:
            for mode in (["--check_config"], []):
                with self.subTest(flags=flags, mode=mode):
                    run = server(*mode, "--address=127.0.0.1:0", "--metrics_address=127.0.0.1:0",
                                 *flags)
                    self.assertEqual(run.returncode, 2, run.stderr)
                    self.assertIn(message, run.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
