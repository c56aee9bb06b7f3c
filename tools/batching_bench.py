#!/usr/bin/env python3
"""batching_bench.py OUT_DIR: dynamic batching on against off, beside the transport floor.

On the GPU machine, starts three servers on loopback: matserve-server with batching on (its
defaults), matserve-server with --max_batch_size=1 (off), and matserve-echo-server (the floor: the
same bytes through gRPC, no compute). For each workload and concurrency it runs matserve-load
against each (answers checked every 20th) and, from the servers' /metrics and /proc, works out
per request: device-busy time (matserve_device_busy_seconds_total), server CPU time (utime +
stime) and the mean batch size (matserve_batch_size). Then multiply 4096^3 at concurrency 1 end
to end against (floor + kernel time, from matserve_compute_duration_seconds); kernel time per
request also has a column of its own. Writes
batching_bench.md and batching_bench.csv into OUT_DIR, with the servers' and loads' logs.

Here, first:  cmake --build build && tools/pack_gpu.sh   (fills .device/)
There:        python3 tools/batching_bench.py "$OUT"      (about 6 minutes)
"""

import argparse
import csv
import datetime
import json
import os
import re
import subprocess
import sys
import time
import urllib.request


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--bin", default=".device/bin")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--mixes", default="multiply:16x16x16,multiply:64x64x64,"
                        "multiply:256x256x256")
    parser.add_argument("--levels", default="1,16,128,256,512")
    parser.add_argument("--warmup", default="1s")
    parser.add_argument("--duration", default="5s")
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--large", default="multiply:4096x4096x4096",
                        help="the end-to-end workload at concurrency 1; empty to skip")
    parser.add_argument("--server_flags", default="",
                        help="more flags for both matserve-servers")
    parser.add_argument("--variants", default="",
                        help="more batching-on servers to measure beside `on`, as "
                        "NAME=FLAGS;NAME=FLAGS (e.g. any=--hold_rule=device_busy); each gets a "
                        "table of its own")
    return parser.parse_args()


class Server:
    """A server process on loopback; its gRPC target and, for matserve-server, its metrics."""

    def __init__(self, name, argv, out, metrics_port=None):
        self.name = name
        self.log_path = os.path.join(out, name + ".log")
        self.metrics_port = metrics_port
        if metrics_port is not None:
            argv = argv + ["--metrics_address=127.0.0.1:%d" % metrics_port]
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(argv + ["--address=127.0.0.1:0"],
                                            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            match = re.search(r"serving on (127\.0\.0\.1:\d+)", open(self.log_path).read())
            if match:
                self.target = match.group(1)
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        sys.exit("%s did not start:\n%s" % (name, open(self.log_path).read()))

    def cpu_seconds(self):
        fields = open("/proc/%d/stat" % self.process.pid).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def metrics(self):
        """Each family's samples summed over their labels, by sample name (with _sum, _count)."""
        if self.metrics_port is None:
            return {}
        url = "http://127.0.0.1:%d/metrics" % self.metrics_port
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        totals = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name_labels, value = line.rsplit(" ", 1)
            name = name_labels.split("{", 1)[0]
            if 'le="' in name_labels:
                continue  # buckets: not needed here
            if name_labels.startswith("matserve_compute_duration_seconds") and \
                    'method="Multiply"' not in name_labels:
                continue
            totals[name] = totals.get(name, 0.0) + float(value)
        return totals

    def snapshot(self):
        return {"cpu": self.cpu_seconds(), **self.metrics()}

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


def delta(after, before, key):
    return after.get(key, 0.0) - before.get(key, 0.0)


def run_load(args, server, mix, level, log_name):
    argv = [os.path.join(args.bin, "matserve-load"), "--target=" + server.target,
            "--mix=" + mix, "--concurrency=%d" % level, "--channels=%d" % args.channels,
            "--warmup=" + args.warmup, "--duration=" + args.duration, "--deadline=120s",
            "--output=json"]
    # The floor answers with the request's own bytes: nothing to verify there.
    argv.append("--verify_every=%d" % (0 if server.name == "floor" else 20))
    log_path = os.path.join(args.out, log_name + ".log")
    with open(log_path, "w") as log:
        result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=log, text=True)
    if result.returncode != 0:
        print("!!! %s exit %d, see %s" % (log_name, result.returncode, log_path))
    report = json.loads(result.stdout)
    report["exit"] = result.returncode
    return report


def measure(args, server, mix, level):
    log_offset = os.path.getsize(server.log_path)
    before = server.snapshot()
    report = run_load(args, server, mix, level,
                      "%s_%s_c%d" % (server.name, re.sub(r"[:x]", "_", mix), level))
    after = server.snapshot()
    served = delta(after, before, "matserve_requests_total")
    batches = delta(after, before, "matserve_batch_size_count")
    row = {
        "rps": report["throughput_rps"],
        "p50_ms": report["latency_ms"]["p50"],
        "p99_ms": report["latency_ms"]["p99"],
        "ok": report["ok"],
        "errors": sum(report["errors"].values()),
        "mismatches": report["mismatches"],
        "exit": report["exit"],
    }
    # What the adaptive hold rule decided during the level, as the server logged it.
    with open(server.log_path) as log:
        log.seek(log_offset)
        changes = [line.split("batcher: ", 1)[1].strip() for line in log
                   if "batcher: " in line]
    row["hold_changes"] = len(changes)
    row["hold_last"] = changes[-1] if changes else ""
    if served > 0:
        row["cpu_us"] = 1e6 * delta(after, before, "cpu") / served
        row["busy_us"] = 1e6 * delta(after, before, "matserve_device_busy_seconds_total") / served
        row["batch"] = delta(after, before, "matserve_batch_size_sum") / batches if batches else 0
        row["kernel_us"] = 1e6 * delta(
            after, before, "matserve_compute_duration_seconds_sum") / served
        computed = delta(after, before, "matserve_compute_duration_seconds_count")
        if computed:
            row["kernel_ms"] = 1e3 * delta(
                after, before, "matserve_compute_duration_seconds_sum") / computed
    return row


def fmt(value, digits=1):
    return "-" if value is None else "%.*f" % (digits, value)


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    extra = args.server_flags.split()
    server_argv = [os.path.join(args.bin, "matserve-server"), "--backend=" + args.backend]
    servers = {
        "floor": Server("floor", [os.path.join(args.bin, "matserve-echo-server")], args.out),
        "off": Server("off", server_argv + ["--max_batch_size=1"] + extra, args.out, 19465),
        "on": Server("on", server_argv + extra, args.out, 19464),
    }
    variants = []
    for number, spec in enumerate(v for v in args.variants.split(";") if v.strip()):
        name, flags = spec.split("=", 1)
        name = name.strip()
        variants.append((name, flags))
        servers[name] = Server(name, server_argv + extra + flags.split(), args.out,
                               19466 + number)
    rows = []
    try:
        for mix in args.mixes.split(","):
            for level in [int(level) for level in args.levels.split(",")]:
                row = {"mix": mix, "concurrency": level}
                for name, server in servers.items():
                    for key, value in measure(args, server, mix, level).items():
                        row[name + "_" + key] = value
                rows.append(row)
                print("%s c%d: floor %.0f rps, off %.0f, on %.0f (batch %.1f)%s" % (
                    mix, level, row["floor_rps"], row["off_rps"], row["on_rps"],
                    row.get("on_batch", 0), "".join(
                        ", %s %.0f (batch %.1f)" % (name, row[name + "_rps"],
                                                    row.get(name + "_batch", 0))
                        for name, _ in variants)), flush=True)
                for name in servers:
                    if row.get(name + "_hold_changes"):
                        print("  %s: the hold rule changed %d times; last: %s" % (
                            name, row[name + "_hold_changes"], row[name + "_hold_last"]),
                            flush=True)
        large = None
        if args.large:
            large = {name: measure(args, servers[name], args.large, 1)
                     for name in ("floor", "on")}
    finally:
        for server in servers.values():
            server.stop()

    try:
        device = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                stdout=subprocess.PIPE, text=True).stdout.strip()
    except FileNotFoundError:
        device = "no GPU (%s)" % os.uname().nodename
    lines = [
        "Device: %s, %d CPU cores. %s. Backend %s; `python3 tools/batching_bench.py OUT%s%s`." % (
            device.splitlines()[0], os.cpu_count(), datetime.date.today().isoformat(),
            args.backend, "" if not extra else " --server_flags='%s'" % args.server_flags,
            "" if not variants else " --variants='%s'" % args.variants),
        "Each level: %s warmup, %s window, %d channels, every 20th answer checked." % (
            args.warmup, args.duration, args.channels),
        "",
        "| workload | conc. | floor rps | off rps | on rps | on/floor | off p50/p99 ms "
        "| on p50/p99 ms | on batch | busy µs/req off | on | off/on | kernel µs/req off | on "
        "| CPU µs/req off | on |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = r["off_busy_us"] / r["on_busy_us"] if r.get("on_busy_us") else None
        lines.append("| %s | %d | %.0f | %.0f | %.0f | %.2f | %s / %s | %s / %s | %s | %s | %s "
                     "| %s | %s | %s | %s | %s |" % (
                         r["mix"].split(":")[1], r["concurrency"], r["floor_rps"], r["off_rps"],
                         r["on_rps"], r["on_rps"] / r["floor_rps"],
                         fmt(r["off_p50_ms"], 2), fmt(r["off_p99_ms"], 2),
                         fmt(r["on_p50_ms"], 2), fmt(r["on_p99_ms"], 2),
                         fmt(r.get("on_batch")), fmt(r.get("off_busy_us")),
                         fmt(r.get("on_busy_us")), fmt(ratio), fmt(r.get("off_kernel_us"), 2),
                         fmt(r.get("on_kernel_us"), 2), fmt(r.get("off_cpu_us")),
                         fmt(r.get("on_cpu_us"))))
    for name, flags in variants:
        lines += [
            "",
            "Variant `%s` (`%s`), measured in the same pass, level by level:" % (name, flags),
            "",
            "| workload | conc. | rps | of off | of floor | p50/p99 ms | batch | busy µs/req "
            "| off/it | CPU µs/req |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            busy = r.get(name + "_busy_us")
            lines.append("| %s | %d | %.0f | %.2f | %.2f | %s / %s | %s | %s | %s | %s |" % (
                r["mix"].split(":")[1], r["concurrency"], r[name + "_rps"],
                r[name + "_rps"] / r["off_rps"], r[name + "_rps"] / r["floor_rps"],
                fmt(r[name + "_p50_ms"], 2), fmt(r[name + "_p99_ms"], 2),
                fmt(r.get(name + "_batch")), fmt(busy),
                fmt(r["off_busy_us"] / busy if busy else None), fmt(r.get(name + "_cpu_us"))))
    wrong = sum(r[n + "_mismatches"] + r[n + "_errors"] + (r[n + "_exit"] != 0)
                for r in rows for n in servers)
    lines += ["", "Errors, wrong answers and failed runs over every level: %d." % wrong]
    if large:
        floor_ms, on_ms = large["floor"]["p50_ms"], large["on"]["p50_ms"]
        kernel_ms = large["on"].get("kernel_ms")
        if kernel_ms:
            lines.append(
                "%s at concurrency 1: p50 %.1f ms end to end; floor p50 %.1f ms + kernel %.1f ms "
                "= %.1f ms; ratio %.2f." % (args.large, on_ms, floor_ms, kernel_ms,
                                             floor_ms + kernel_ms,
                                             on_ms / (floor_ms + kernel_ms)))
    text = "\n".join(lines) + "\n"
    print(text)
    open(os.path.join(args.out, "batching_bench.md"), "w").write(text)
    with open(os.path.join(args.out, "batching_bench.csv"), "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=sorted({k for r in rows for k in r}))
        writer.writeheader()
        writer.writerows(rows)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
