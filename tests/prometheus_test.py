#!/usr/bin/env python3
"""matserve's metrics against the real Prometheus tools: `promtool check metrics` on a scrape of a
running CPU matserve-server (PromtoolCheckMetrics), and a real Prometheus server scraping one
every second with deploy/prometheus's rules loaded (PrometheusEndToEnd): a known number of calls,
some refused with INVALID_ARGUMENT, then Prometheus's HTTP API must give the exact totals by
method and code, a rate() and a histogram_quantile() consistent with them, rules that evaluate
without error, and data for every query of the Grafana dashboard.

Usage: prometheus_test.py --server PATH/matserve-server --stubs BUILD/python --promtool PATH
                          --prometheus PATH --deploy SOURCE/deploy [unittest arguments]
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

ARGS = None


def import_stubs():
    sys.path.insert(0, ARGS.stubs)
    global grpc, pb, pb_grpc
    import grpc
    from matserve.v1 import matrix_service_pb2 as pb
    from matserve.v1 import matrix_service_pb2_grpc as pb_grpc


def read(path):
    with open(path) as f:
        return f.read()


def wait_for(condition, timeout, what):
    """Polls `condition` until it returns something truthy, and returns that; fails after
    `timeout` seconds, saying `what` it waited for and the last value seen."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = condition()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError("timed out after %ds waiting for %s (last: %r)" % (timeout, what, last))


class Server:
    """A CPU matserve-server on loopback, gRPC and metrics on free ports."""

    def __init__(self):
        self.log = tempfile.NamedTemporaryFile(prefix="matserve-prometheus-test-", suffix=".log")
        self.process = subprocess.Popen(
            [ARGS.server, "--backend=cpu", "--address=127.0.0.1:0",
             "--metrics_address=127.0.0.1:0"], stdout=self.log, stderr=subprocess.STDOUT)

        def addresses():
            text = read(self.log.name)
            if self.process.poll() is not None:
                raise RuntimeError("matserve-server exited: " + text)
            grpc_match = re.search(r"serving on (127\.0\.0\.1:\d+) ", text)
            metrics_match = re.search(r"metrics on http://(127\.0\.0\.1:\d+)/metrics", text)
            return grpc_match and metrics_match and (grpc_match.group(1), metrics_match.group(1))

        self.target, self.metrics = wait_for(addresses, 60, "matserve-server to log its ports")
        self.channel = grpc.insecure_channel(self.target)
        self.stub = pb_grpc.MatrixServiceStub(self.channel)

    def scrape(self):
        with urllib.request.urlopen("http://%s/metrics" % self.metrics, timeout=30) as reply:
            return reply.read().decode()

    def stop(self):
        self.channel.close()
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=60)
        if status != 0:
            raise RuntimeError("exit status %d on SIGTERM: %s" % (status, read(self.log.name)))
        self.log.close()


def matrix(rows, cols):
    return pb.Matrix(rows=rows, cols=cols, data=struct.pack("<%df" % (rows * cols),
                                                            *[0.5] * (rows * cols)))


class Traffic:
    """Calls sent and what they should add up to on the server."""

    def __init__(self):
        self.calls = {}      # (method, code) -> count
        self.latencies = {}  # method -> client-side seconds of every call
        self.flops = 0
        self.response_bytes = 0

    def call(self, method, rpc, request, want_ok):
        start = time.perf_counter()
        code = "OK"
        try:
            reply = rpc(request, timeout=60)
        except grpc.RpcError as error:
            code = error.code().name
        self.latencies.setdefault(method, []).append(time.perf_counter() - start)
        if code != ("OK" if want_ok else "INVALID_ARGUMENT"):
            raise AssertionError("%s ended %s" % (method, code))
        self.calls[(method, code)] = self.calls.get((method, code), 0) + 1
        return reply if code == "OK" else None

    def send(self, stub, multiplies, transposes, bad_multiplies, bad_transposes):
        for i in range(multiplies):
            m, k, n = 1 + i % 7, 3 + i % 5, 2 + i % 3
            reply = self.call("Multiply", stub.Multiply,
                              pb.MultiplyRequest(a=matrix(m, k), b=matrix(k, n)), True)
            self.flops += 2 * m * n * k
            self.response_bytes += len(reply.c.data)
        for i in range(transposes):
            reply = self.call("Transpose", stub.Transpose,
                              pb.TransposeRequest(input=matrix(1 + i % 4, 9)), True)
            self.response_bytes += len(reply.output.data)
        for _ in range(bad_multiplies):  # inner dimensions differ
            self.call("Multiply", stub.Multiply,
                      pb.MultiplyRequest(a=matrix(2, 3), b=matrix(4, 2)), False)
        for _ in range(bad_transposes):  # a zero dimension
            self.call("Transpose", stub.Transpose, pb.TransposeRequest(input=pb.Matrix(rows=0, cols=2)),
                      False)

    def total(self, method=None):
        return sum(n for (m, _), n in self.calls.items() if method in (None, m))


def parse_scrape(text):
    """{series line without value: value}."""
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            samples[series] = float(value)
    return samples


class PromtoolCheckMetrics(unittest.TestCase):
    def test_a_real_scrape_passes_promtool(self):
        server = Server()
        try:
            traffic = Traffic()
            traffic.send(server.stub, multiplies=5, transposes=5, bad_multiplies=2,
                         bad_transposes=1)
            text = server.scrape()
        finally:
            server.stop()
        check = subprocess.run([ARGS.promtool, "check", "metrics"], input=text, text=True,
                               capture_output=True, timeout=60)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertEqual(check.stdout + check.stderr, "", "promtool found problems")
        samples = parse_scrape(text)
        self.assertEqual(samples['matserve_requests_total{method="Multiply",code="OK"}'], 5)
        self.assertEqual(
            samples['matserve_requests_total{method="Multiply",code="INVALID_ARGUMENT"}'], 2)
        self.assertEqual(
            samples['matserve_requests_total{method="Transpose",code="INVALID_ARGUMENT"}'], 1)
        self.assertEqual(samples['matserve_build_info{version="0.1.0",backend="cpu"}'], 1)
        self.assertEqual(samples['matserve_inflight_requests'], 0)
        self.assertIn('matserve_device_busy_seconds_total{device="cpu"}', samples)


class PrometheusEndToEnd(unittest.TestCase):
    MULTIPLIES, TRANSPOSES, BAD_MULTIPLIES, BAD_TRANSPOSES = 40, 25, 7, 3

    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.storage = tempfile.mkdtemp(prefix="matserve-prometheus-tsdb-")
        cls.prometheus = None
        cls.start_time = time.time()  # before Prometheus's first sample
        try:
            cls.start_prometheus()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def start_prometheus(cls):
        rules = os.path.join(ARGS.deploy, "prometheus")
        config = os.path.join(cls.storage, "prometheus.yml")
        with open(config, "w") as out:
            json.dump({  # JSON is YAML
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [os.path.join(rules, "recording_rules.yml"),
                               os.path.join(rules, "alerts.yml")],
                "scrape_configs": [{"job_name": "matserve", "metrics_path": "/metrics",
                                    "static_configs": [{"targets": [cls.server.metrics]}]}],
            }, out)
        # A free port, found by binding; another process may take it before Prometheus does,
        # so a Prometheus that exits at once is started again on another.
        for _ in range(3):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                cls.web = "127.0.0.1:%d" % probe.getsockname()[1]
            cls.prometheus_log = tempfile.NamedTemporaryFile(prefix="prometheus-", suffix=".log")
            cls.prometheus = subprocess.Popen(
                [ARGS.prometheus, "--config.file=" + config,
                 "--storage.tsdb.path=" + os.path.join(cls.storage, "data"),
                 "--web.listen-address=" + cls.web, "--log.level=warn"],
                stdout=cls.prometheus_log, stderr=subprocess.STDOUT)

            def ready():
                if cls.prometheus.poll() is not None:
                    return "exited"
                try:
                    with urllib.request.urlopen("http://%s/-/ready" % cls.web, timeout=5) as r:
                        return r.status == 200 and "ready"
                except OSError:
                    return None

            if wait_for(ready, 120, "Prometheus to be ready") == "ready":
                return
        raise RuntimeError("Prometheus did not start: " + read(cls.prometheus_log.name))

    @classmethod
    def tearDownClass(cls):
        if cls.prometheus is not None and cls.prometheus.poll() is None:
            cls.prometheus.send_signal(signal.SIGTERM)
            try:
                cls.prometheus.wait(timeout=60)
            except subprocess.TimeoutExpired:
                cls.prometheus.kill()
                cls.prometheus.wait()
        if cls.prometheus is not None:
            cls.prometheus_log.close()
        cls.server.stop()
        shutil.rmtree(cls.storage, ignore_errors=True)

    def query(self, expr, at=None):
        """The vector an instant query returns: [(labels, value)]."""
        params = {"query": expr}
        if at is not None:
            params["time"] = "%.3f" % at
        url = "http://%s/api/v1/query?%s" % (self.web, urllib.parse.urlencode(params))
        with urllib.request.urlopen(url, timeout=30) as reply:
            answer = json.load(reply)
        self.assertEqual(answer["status"], "success", (expr, answer))
        return [(r["metric"], float(r["value"][1])) for r in answer["data"]["result"]]

    def by(self, label, expr, at=None):
        return {labels.get(label): value for labels, value in self.query(expr, at)}

    def test_prometheus_agrees_with_what_was_sent(self):
        # Prometheus has scraped the series at zero before any call, so a rate over the whole
        # run starts from zero.
        wait_for(lambda: self.query('up{job="matserve"} == 1')
                 and self.query("matserve_requests_total"), 120,
                 "Prometheus to scrape matserve-server")
        traffic = Traffic()
        traffic.send(self.server.stub, self.MULTIPLIES, self.TRANSPOSES, self.BAD_MULTIPLIES,
                     self.BAD_TRANSPOSES)
        want = {("Multiply", "OK"): self.MULTIPLIES,
                ("Multiply", "INVALID_ARGUMENT"): self.BAD_MULTIPLIES,
                ("Transpose", "OK"): self.TRANSPOSES,
                ("Transpose", "INVALID_ARGUMENT"): self.BAD_TRANSPOSES}
        self.assertEqual(traffic.calls, want)

        # Totals by method and code, exact, once a scrape after the last call is in.
        def totals():
            got = {(labels["method"], labels["code"]): value for labels, value in self.query(
                "sum by (method, code) (matserve_requests_total) > 0")}
            return got == want and got
        wait_for(totals, 60, "Prometheus to have every call")
        now = time.time()
        self.assertEqual(self.by("code", "sum by (code) (matserve_requests_total)", now),
                         {"OK": self.MULTIPLIES + self.TRANSPOSES,
                          "INVALID_ARGUMENT": self.BAD_MULTIPLIES + self.BAD_TRANSPOSES, **{
                             code: 0 for code in (
                                 "CANCELLED", "UNKNOWN", "DEADLINE_EXCEEDED", "NOT_FOUND",
                                 "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
                                 "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
                                 "UNAUTHENTICATED")}})
        durations = self.by("method", "matserve_request_duration_seconds_count", now)
        self.assertEqual(durations, {"Multiply": traffic.total("Multiply"),
                                     "Transpose": traffic.total("Transpose")})
        # Only the valid calls reached the engine's queue and batches.
        computed = {"Multiply": self.MULTIPLIES, "Transpose": self.TRANSPOSES}
        self.assertEqual(self.by("method", "matserve_queue_duration_seconds_count", now), computed)
        self.assertEqual(self.by("method", "matserve_batch_size_sum", now), computed)
        self.assertEqual(self.query("matserve_flops_total", now)[0][1], traffic.flops)
        self.assertEqual(self.by("direction", "matserve_payload_bytes_total", now)["response"],
                         traffic.response_bytes)
        self.assertEqual(self.query("matserve_inflight_requests", now)[0][1], 0)

        # rate() over a window holding the whole run: starting from a zero sample, Prometheus
        # extrapolates only past the last sample (at most ~1.1 scrape intervals), so rate * window
        # lies between the total and a little over it.
        window = math.ceil(now - self.start_time) + 5
        rates = self.by("method", "sum by (method) (rate(matserve_requests_total[%ds]))" % window,
                        now)
        for method in ("Multiply", "Transpose"):
            with self.subTest(method=method):
                self.assertGreaterEqual(rates[method] * window, traffic.total(method) * 0.999)
                self.assertLessEqual(rates[method] * window, traffic.total(method) * 1.5)
        errors = self.by("method", 'sum by (method) (rate(matserve_requests_total{code='
                         '"INVALID_ARGUMENT"}[%ds])) / sum by (method) (rate('
                         'matserve_requests_total[%ds]))' % (window, window), now)
        self.assertAlmostEqual(errors["Multiply"],
                               self.BAD_MULTIPLIES / traffic.total("Multiply"), places=9)
        self.assertAlmostEqual(errors["Transpose"],
                               self.BAD_TRANSPOSES / traffic.total("Transpose"), places=9)

        # histogram_quantile: the median lies in the bucket where the raw buckets cross half the
        # count, and no higher than the bucket holding the client's median (a call's time in the
        # server is within the time the client saw).
        for method in ("Multiply", "Transpose"):
            with self.subTest(method=method):
                median = self.query(
                    'histogram_quantile(0.5, sum by (le) (rate(matserve_request_duration_seconds_'
                    'bucket{method="%s"}[%ds])))' % (method, window), now)[0][1]
                buckets = sorted(
                    (float(labels["le"]), value) for labels, value in self.query(
                        'matserve_request_duration_seconds_bucket{method="%s"}' % method, now))
                count = buckets[-1][1]
                lower = 0
                for bound, cumulative in buckets:
                    if cumulative >= count / 2:
                        break
                    lower = bound
                self.assertGreater(median, lower)
                self.assertLessEqual(median, bound)
                client = sorted(traffic.latencies[method])
                client_median = client[(len(client) - 1) // 2]
                client_bucket = min(b for b, _ in buckets if b >= client_median)
                self.assertLessEqual(median, client_bucket)

        # The recording rules and alerts evaluate against real data without error, and every
        # query of the dashboard works; all but the GPU memory panel have data on the CPU.
        def rules_healthy():
            with urllib.request.urlopen("http://%s/api/v1/rules" % self.web, timeout=30) as r:
                groups = json.load(r)["data"]["groups"]
            rules = [rule for group in groups for rule in group["rules"]]
            evaluated = rules and all(not rule["lastEvaluation"].startswith("0001")
                                      for rule in rules)
            return evaluated and rules
        rules = wait_for(rules_healthy, 60, "every rule to be evaluated")
        self.assertEqual(len(rules), 20)
        for rule in rules:
            self.assertEqual(rule["health"], "ok", rule)
        self.assertEqual([r["name"] for r in rules if r["type"] == "alerting"
                          and r["state"] != "inactive"], [], "no alert on healthy traffic")
        wait_for(lambda: self.query("method:matserve_requests:rate1m > 0"), 60,
                 "the recording rules to see the calls")
        with open(os.path.join(ARGS.deploy, "grafana", "dashboards", "matserve.json")) as f:
            dashboard = json.load(f)
        for panel in dashboard["panels"]:
            for target in panel["targets"]:
                with self.subTest(panel=panel["title"], expr=target["expr"]):
                    result = self.query(target["expr"])
                    if "device_memory" not in target["expr"]:
                        self.assertTrue(result, "no data")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--server", "--stubs", "--promtool", "--prometheus", "--deploy"):
        parser.add_argument(flag, required=True)
    ARGS, rest = parser.parse_known_args()
    import_stubs()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
