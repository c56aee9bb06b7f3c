#!/usr/bin/env python3
"""Interop: a Python gRPC client (Debian's python3-grpcio) against the real matserve-server.

Usage: interop_test.py --server PATH/matserve-server --stubs BUILD/python
The stubs are generated at build time by protoc with grpc_python_plugin.
"""
import argparse
import math
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

ARGS = None


def pack(values):
    return struct.pack("<%df" % len(values), *values)


def unpack(data):
    return list(struct.unpack("<%df" % (len(data) // 4), data))


class MatserveInterop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, ARGS.stubs)
        global grpc, pb, pb_grpc, health_pb2, health_pb2_grpc, refl_pb2, refl_pb2_grpc
        import grpc
        from matserve.v1 import matrix_service_pb2 as pb
        from matserve.v1 import matrix_service_pb2_grpc as pb_grpc
        from stdprotos import health_pb2, health_pb2_grpc
        from stdprotos import reflection_pb2 as refl_pb2
        from stdprotos import reflection_pb2_grpc as refl_pb2_grpc

        cls.log = tempfile.NamedTemporaryFile(prefix="matserve-interop-", suffix=".log")
        cls.server = subprocess.Popen(
            [ARGS.server, "--address=127.0.0.1:0", "--backend=cpu",
             "--metrics_address=127.0.0.1:0"],
            stdout=cls.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        port = None
        while port is None and time.time() < deadline:
            match = re.search(r"serving on 127\.0\.0\.1:(\d+) ", open(cls.log.name).read())
            port = match and match.group(1)
            if cls.server.poll() is not None:
                raise RuntimeError("server exited: " + open(cls.log.name).read())
            time.sleep(0.05)
        if port is None:
            raise RuntimeError("server never logged its port")
        cls.channel = grpc.insecure_channel("127.0.0.1:" + port)
        cls.stub = pb_grpc.MatrixServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        if cls.server.poll() is None:
            cls.server.kill()
            cls.server.wait()

    def test_multiply_matches_float64_reference(self):
        rng = random.Random()
        for m, k, n in [(1, 1, 1), (7, 13, 5), (1, 301, 2), (37, 1, 41)]:
            # A positive mean keeps the dot products away from cancellation (see
            # client/matrix.h).
            a = [rng.uniform(-0.5, 1) for _ in range(m * k)]
            b = [rng.uniform(-0.5, 1) for _ in range(k * n)]
            reply = self.stub.Multiply(pb.MultiplyRequest(
                a=pb.Matrix(rows=m, cols=k, data=pack(a)),
                b=pb.Matrix(rows=k, cols=n, data=pack(b))), timeout=30)
            self.assertEqual((reply.c.rows, reply.c.cols), (m, n))
            # The server sees the float32-rounded inputs; so does the reference.
            a32, b32 = unpack(pack(a)), unpack(pack(b))
            want = [math.fsum(a32[i * k + p] * b32[p * n + j] for p in range(k))
                    for i in range(m) for j in range(n)]
            got = unpack(reply.c.data)
            diff = math.sqrt(sum((g - w) ** 2 for g, w in zip(got, want)))
            norm = math.sqrt(sum(w * w for w in want))
            self.assertLessEqual(diff / norm, 1e-5, (m, k, n))

    def test_transpose_is_bit_exact(self):
        rows, cols = 3, 5
        words = [random.getrandbits(32) & 0x7F7FFFFF for _ in range(rows * cols)]
        words[4] = 0x7FC01234  # NaN with a payload
        data = struct.pack("<%dI" % len(words), *words)
        reply = self.stub.Transpose(
            pb.TransposeRequest(input=pb.Matrix(rows=rows, cols=cols, data=data)), timeout=30)
        self.assertEqual((reply.output.rows, reply.output.cols), (cols, rows))
        got = struct.unpack("<%dI" % len(words), reply.output.data)
        want = tuple(words[r * cols + c] for c in range(cols) for r in range(rows))
        self.assertEqual(got, want)

    def test_bad_input_gets_invalid_argument_with_a_message(self):
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.Multiply(pb.MultiplyRequest(b=pb.Matrix(rows=1, cols=1, data=pack([1]))))
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("missing matrix a", caught.exception.details())
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.Transpose(pb.TransposeRequest(input=pb.Matrix(rows=2, cols=2, data=b"x")))
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("input.data has 1 bytes", caught.exception.details())

    def test_health_reports_serving(self):
        health = health_pb2_grpc.HealthStub(self.channel)
        for service in ("", "matserve.v1.MatrixService"):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
            self.assertEqual(reply.status, health_pb2.HealthCheckResponse.SERVING, service)

    def test_reflection_describes_the_api(self):
        from google.protobuf import descriptor_pb2
        reflection = refl_pb2_grpc.ServerReflectionStub(self.channel)
        requests = [refl_pb2.ServerReflectionRequest(list_services=""),
                    refl_pb2.ServerReflectionRequest(
                        file_containing_symbol="matserve.v1.MatrixService")]
        listed, described = list(reflection.ServerReflectionInfo(iter(requests), timeout=10))
        names = {s.name for s in listed.list_services_response.service}
        self.assertIn("matserve.v1.MatrixService", names)
        self.assertIn("grpc.health.v1.Health", names)
        files = [descriptor_pb2.FileDescriptorProto.FromString(raw)
                 for raw in described.file_descriptor_response.file_descriptor_proto]
        services = {s.name: [m.name for m in s.method] for f in files for s in f.service}
        self.assertEqual(sorted(services["MatrixService"]), ["Multiply", "Transpose"])

    def test_zz_sigterm_exits_zero(self):  # runs last: unittest sorts by name
        self.server.send_signal(signal.SIGTERM)
        self.assertEqual(self.server.wait(timeout=60), 0, open(self.log.name).read())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--stubs", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
