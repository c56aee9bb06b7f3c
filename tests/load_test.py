#!/usr/bin/env python3
"""matserve-load end to end: bad flags, verified runs against a real CPU matserve-server, sweeps,
the open loop, wrong answers caught against matserve-echo-server (which does not compute), and
the transport floor.

Usage: load_test.py --server PATH/matserve-server --echo PATH/matserve-echo-server
                    --load PATH/matserve-load
"""
import argparse
import csv
import io
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ARGS = None

REQUIRED_KEYS = {"requests", "ok", "errors", "throughput_rps", "gflops", "payload_gbps",
                 "latency_ms", "verified", "mismatches", "floor_rps", "fraction_of_floor"}
LATENCY_KEYS = ["p50", "p90", "p95", "p99", "p999", "max"]


def start(binary, *flags):
    """Starts a server on a free loopback port; returns (process, log file, "127.0.0.1:PORT")."""
    log = tempfile.NamedTemporaryFile(prefix="matserve-load-test-", suffix=".log")
    process = subprocess.Popen([binary, "--address=127.0.0.1:0", *flags],
                               stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while time.time() < deadline:
        match = re.search(r"serving on (127\.0\.0\.1:\d+) ", open(log.name).read())
        if match:
            return process, log, match.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(binary + " did not start: " + open(log.name).read())


class Load(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server, cls.server_log, cls.service = start(ARGS.server, "--backend=cpu",
                                                        "--metrics_address=127.0.0.1:0")
        cls.echo, cls.echo_log, cls.floor = start(ARGS.echo)

    @classmethod
    def tearDownClass(cls):
        for process, log in ((cls.server, cls.server_log), (cls.echo, cls.echo_log)):
            process.send_signal(signal.SIGTERM)
            status = process.wait(timeout=60)
            if status != 0:
                raise RuntimeError("exit status %d on SIGTERM: %s" % (status, open(log.name).read()))

    def load(self, *flags):
        return subprocess.run([ARGS.load, "--progress=false", *flags], capture_output=True,
                              text=True, timeout=120)

    def json_report(self, *flags, status=0):
        run = self.load("--output=json", *flags)
        self.assertEqual(run.returncode, status, run.stderr)
        return json.loads(run.stdout), run.stderr

    def assert_complete(self, report):
        self.assertLessEqual(REQUIRED_KEYS, set(report), report)
        self.assertEqual(list(report["latency_ms"]), LATENCY_KEYS)
        latencies = [report["latency_ms"][key] for key in LATENCY_KEYS]
        self.assertEqual(latencies, sorted(latencies), "percentiles out of order")
        self.assertGreater(latencies[0], 0)
        self.assertEqual(report["requests"], report["ok"] + sum(report["errors"].values()))

    def test_bad_flags_exit_2_with_a_message(self):
        cases = [
            (["--mix=add:1x1"], 'unknown operation "add"'),
            (["--mix=multiply:64x64"], "the shape must be MxKxN"),
            (["--mix=transpose:65536x65536"], "over --max_message_bytes"),
            (["--concurrency=0"], "--concurrency must be at least 1"),
            (["--concurrency_range=8:4"], "END must be a whole number >= START"),
            (["--concurrency_range=1:8:1"], "FACTOR must be a whole number >= 2"),
            (["--concurrency=4", "--concurrency_range=1:8"], "exclude each other"),
            (["--output=xml"], "--output=xml: expected text, json or csv"),
            (["--rate=10", "--concurrency_range=1:4"], "exclude each other"),
            (["--rate=10", "--concurrency=4"], "exclude each other"),
            (["--rate=-1"], "--rate must be a number >= 0"),
            (["--arrival=poisson"], "--arrival applies to the open loop (--rate) only"),
            (["--rate=10", "--arrival=bursty"], "expected constant or poisson"),
            (["--duration=0s"], "--duration must be positive"),
            (["--requests=10", "--duration=5s"], "--duration and --requests exclude each other"),
            (["--requests=-1"], "--requests must be >= 0"),
            (["--deadline=0s"], "--deadline must be positive"),
            (["--warmup=-1s"], "--warmup must not be negative"),
            (["--channels=0"], "--channels must be at least 1"),
            (["--verify_every=-1"], "--verify_every must be >= 0"),
            (["--target=a:1,,b:2"], "--target=a:1,,b:2: an empty target"),
            (["--floor_target=,"], "--floor_target=,: an empty target"),
            (["--max_message_bytes=0"], "--max_message_bytes must be in"),
            (["--bogus_flag=1"], "Unknown command line flag 'bogus_flag'"),
            (["--concurrency=many"], "Illegal value 'many'"),
            (["positional"], 'unexpected argument "positional"'),
        ]
        for flags, message in cases:
            with self.subTest(flags=flags):
                run = self.load("--target=" + self.service, *flags)
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertIn(message, run.stderr)
                self.assertEqual(run.stdout, "")

    def test_verified_run_against_the_service(self):
        report, _ = self.json_report(
            "--target=" + self.service, "--mix=multiply:33x17x9,transpose:31x7:0.5",
            "--concurrency=4", "--requests=300", "--warmup=0s", "--verify_every=1")
        self.assertIsInstance(report, dict)
        self.assert_complete(report)
        self.assertEqual(report["requests"], 300)
        self.assertEqual(report["ok"], 300)
        self.assertEqual(report["errors"], {})
        self.assertEqual(report["mismatches"], 0)
        self.assertGreater(report["verified"], 0)
        self.assertEqual(report["verified"] + report["verify_skipped"], 300)
        self.assertGreater(report["gflops"], 0)
        self.assertGreater(report["payload_gbps"], 0)
        self.assertAlmostEqual(report["throughput_rps"], 300 / report["duration_s"], delta=1)
        self.assertIsNone(report["floor_rps"])

    def test_concurrency_range_gives_one_object_per_level(self):
        report, _ = self.json_report(
            "--target=" + self.service, "--mix=multiply:16x16x16", "--concurrency_range=1:4:2",
            "--requests=100", "--warmup=0.1s", "--verify_every=7")
        self.assertIsInstance(report, list)
        self.assertEqual([level["concurrency"] for level in report], [1, 2, 4])
        for level in report:
            self.assert_complete(level)
            self.assertEqual(level["ok"], 100)
            self.assertEqual(level["mismatches"], 0)

    def test_duration_counts_the_window(self):
        report, _ = self.json_report(
            "--target=" + self.service, "--mix=transpose:64x64", "--concurrency=2",
            "--duration=1s", "--warmup=0.2s")
        self.assert_complete(report)
        self.assertEqual(report["duration_s"], 1)
        self.assertEqual(report["throughput_rps"], report["ok"])
        self.assertEqual(report["gflops"], 0, "a transpose does no arithmetic")

    def test_open_loop_sends_on_schedule(self):
        report, _ = self.json_report(
            "--target=" + self.service, "--mix=multiply:8x8x8", "--rate=400",
            "--duration=1s", "--warmup=0s")
        self.assert_complete(report)
        self.assertEqual(report["mode"], "open")
        self.assertEqual(report["rate"], 400)
        self.assertIsNone(report["concurrency"])
        self.assertEqual(report["requests"], 400, "one call every 2.5 ms for 1 s")
        poisson, _ = self.json_report(
            "--target=" + self.service, "--mix=multiply:8x8x8", "--rate=400",
            "--arrival=poisson", "--requests=200", "--warmup=0s")
        self.assertEqual(poisson["requests"], 200)
        self.assertGreater(poisson["throughput_rps"], 200)
        self.assertLess(poisson["throughput_rps"], 800)

    def test_wrong_answers_exit_1(self):
        # The echo server answers zeros for a product and the input's bytes for a transpose.
        report, stderr = self.json_report(
            "--target=" + self.floor, "--mix=multiply:16x8x4,transpose:3x5", "--requests=50",
            "--warmup=0s", "--verify_every=1", status=1)
        self.assertEqual(report["ok"], 50)
        self.assertGreater(report["mismatches"], 0)
        self.assertEqual(report["mismatches"], report["verified"])
        self.assertIn("wrong answer(s)", stderr)

    def test_targets_take_turns(self):
        # Each channel sends its calls round-robin over both addresses once it is connected to
        # both, so the echo server answers about every other call (its connection may come up a
        # moment after the first): exactly those answers are wrong.
        report, _ = self.json_report(
            "--target=%s,%s" % (self.service, self.floor), "--channels=3",
            "--mix=multiply:4x4x4", "--requests=100", "--warmup=0s", "--verify_every=1",
            status=1)
        self.assertEqual(report["verify_skipped"], 0)
        self.assertEqual(report["verified"], 100)
        by_peer = report["ok_by_peer"]
        self.assertEqual(sorted(by_peer), sorted(["ipv4:" + self.service, "ipv4:" + self.floor]))
        self.assertEqual(report["mismatches"], by_peer["ipv4:" + self.floor])
        self.assertEqual(by_peer["ipv4:" + self.service] + by_peer["ipv4:" + self.floor], 100)
        self.assertGreaterEqual(by_peer["ipv4:" + self.floor], 20)
        self.assertGreaterEqual(by_peer["ipv4:" + self.service], 20)

    def test_grpc_target_names(self):
        # A dns:/// name and an ipv4: address list go to gRPC as they are.
        for target in ("dns:///localhost:" + self.service.split(":")[1],
                       "ipv4:%s,%s" % (self.service, self.service)):
            with self.subTest(target=target):
                report, _ = self.json_report(
                    "--target=" + target, "--mix=transpose:3x5", "--requests=20", "--warmup=0s",
                    "--verify_every=1")
                self.assertEqual(report["ok"], 20)
                self.assertEqual(report["mismatches"], 0)
                self.assertEqual(report["ok_by_peer"], {"ipv4:" + self.service: 20})

    def test_check_config_connects_to_nothing(self):
        run = self.load("--target=dns:///matserve-headless.matserve.svc:50051",
                        "--mix=multiply:64x64x64", "--check_config")
        self.assertEqual((run.returncode, run.stdout, run.stderr), (0, "", ""))
        run = self.load("--target=127.0.0.1:1", "--mix=multiply:64", "--check_config")
        self.assertEqual(run.returncode, 2)
        self.assertIn("the shape must be MxKxN", run.stderr)

    def test_list_with_a_name_that_does_not_resolve_exits_1(self):
        run = self.load("--target=%s,matserve.invalid:1" % self.service)
        self.assertEqual(run.returncode, 1)
        self.assertIn('cannot resolve "matserve.invalid"', run.stderr)

    def test_floor_beside_the_service(self):
        report, _ = self.json_report(
            "--target=" + self.service, "--floor_target=" + self.floor,
            "--mix=multiply:32x32x32", "--concurrency=2", "--requests=200", "--warmup=0s",
            "--verify_every=10")
        self.assert_complete(report)
        self.assertEqual(report["mismatches"], 0, "the floor run is not verified")
        self.assertGreater(report["floor_rps"], 0)
        self.assertAlmostEqual(report["fraction_of_floor"],
                               report["throughput_rps"] / report["floor_rps"], places=3)

    def test_csv_and_text(self):
        run = self.load("--target=" + self.service, "--mix=multiply:8x8x8,transpose:4x4:0.5",
                        "--concurrency_range=1:2", "--requests=20", "--warmup=0s",
                        "--output=csv")
        self.assertEqual(run.returncode, 0, run.stderr)
        rows = list(csv.DictReader(io.StringIO(run.stdout)))
        self.assertEqual([row["concurrency"] for row in rows], ["1", "2"])
        self.assertEqual(rows[0]["mix"], "multiply:8x8x8,transpose:4x4:0.5")
        self.assertEqual(rows[1]["ok"], "20")
        self.assertEqual(rows[1]["floor_rps"], "")
        run = self.load("--target=" + self.service, "--mix=multiply:8x8x8", "--requests=20",
                        "--warmup=0s")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertRegex(run.stdout, r"p99\.9 ms")
        self.assertRegex(run.stdout, r"\nconcurrency 1 +20 +20 +0 ")

    def test_unreachable_target_exits_1(self):
        run = self.load("--target=127.0.0.1:1", "--connect_timeout=0.5s")
        self.assertEqual(run.returncode, 1)
        self.assertIn("cannot connect to 127.0.0.1:1", run.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--echo", required=True)
    parser.add_argument("--load", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
