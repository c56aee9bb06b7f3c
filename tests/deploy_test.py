#!/usr/bin/env python3
"""deploy/ against the real programs: the arguments that the Dockerfile, compose.yaml and the
Kubernetes manifests give matserve-server and matserve-load are run through their --check_config,
the health checks and probes are run against a real server, and the ports, grace periods, names
and selectors the files share are checked to agree, so that no file drifts from the flags or from
another file.

Usage: deploy_test.py --server PATH --cli PATH --load PATH --deploy DIR [--kubectl PATH]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

ARGS = None


def program(path):
    """The built program that an image path or name (/opt/matserve/bin/matserve-server) means."""
    name = os.path.basename(path)
    programs = {"matserve-server": ARGS.server, "matserve-cli": ARGS.cli,
                "matserve-load": ARGS.load}
    if name not in programs:
        raise AssertionError("not a matserve program: " + path)
    return programs[name]


def flag(argv, name):
    """The value of --name=VALUE in argv (the last one wins, as with Abseil), or None."""
    value = None
    for arg in argv:
        if arg.startswith("--%s=" % name):
            value = arg.split("=", 1)[1]
    return value


def port_of(address):
    return int(address.rsplit(":", 1)[1])


def seconds(duration):
    """An Abseil or compose duration ("30s", "1m30s", "500ms") in seconds."""
    total, rest = 0.0, duration
    for number, unit in re.findall(r"([0-9.]+)(ms|h|m|s)", duration):
        total += float(number) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
        rest = rest.replace(number + unit, "", 1)
    if rest or not duration:
        raise AssertionError("not a duration: " + duration)
    return total


def run(argv, timeout=60):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def dockerfile():
    """The last stage's instructions of deploy/Dockerfile: {INSTRUCTION: [arguments, ...]}."""
    with open(os.path.join(ARGS.deploy, "Dockerfile")) as text:
        lines = [line for line in text.read().splitlines() if not line.lstrip().startswith("#")]
    instructions = []
    for line in "\n".join(lines).replace("\\\n", " ").splitlines():
        if line.strip():
            keyword, _, rest = line.strip().partition(" ")
            instructions.append((keyword.upper(), rest.strip()))
    last_from = max(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM")
    stage = {}
    for keyword, rest in instructions[last_from:]:
        stage.setdefault(keyword, []).append(rest)
    return stage


def exec_form(text):
    """An ENTRYPOINT/CMD in exec (JSON) form; the shell form would not pass signals on."""
    argv = json.loads(text)
    assert isinstance(argv, list) and all(isinstance(arg, str) for arg in argv), text
    return argv


def image_command():
    """ENTRYPOINT and CMD of the image."""
    stage = dockerfile()
    return exec_form(stage["ENTRYPOINT"][-1]), exec_form(stage["CMD"][-1])


class Server:
    """A real CPU matserve-server started with `argv`'s flags, but on free loopback ports."""

    def __init__(self, argv):
        flags = [arg for arg in argv[1:]
                 if not arg.startswith(("--address=", "--metrics_address=", "--backend="))]
        self.log = tempfile.NamedTemporaryFile(prefix="matserve-deploy-", suffix=".log")
        self.process = subprocess.Popen(
            [program(argv[0]), *flags, "--backend=cpu", "--address=127.0.0.1:0",
             "--metrics_address=127.0.0.1:0"], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            with open(self.log.name) as text:
                match = re.search(r"serving on 127\.0\.0\.1:(\d+) ", text.read())
            if match:
                self.port = int(match.group(1))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.process.kill()
        with open(self.log.name) as text:
            raise AssertionError("matserve-server did not start: " + text.read())

    def close(self):
        self.process.kill()
        self.process.wait()
        self.log.close()


class Deploy(unittest.TestCase):
    def assert_server_accepts(self, argv):
        self.assertEqual(os.path.basename(argv[0]), "matserve-server", argv)
        for arg in argv[1:]:
            self.assertRegex(arg, r"^--[a-z_]+=", "every argument a --flag=value")
        checked = run([program(argv[0]), *argv[1:], "--check_config"])
        self.assertEqual(checked.returncode, 0,
                         "matserve-server %s: %s" % (" ".join(argv[1:]), checked.stderr))

    def test_dockerfile(self):
        stage = dockerfile()
        entrypoint, cmd = image_command()
        argv = entrypoint + cmd
        self.assert_server_accepts(argv)
        grpc_port = port_of(flag(argv, "address"))
        metrics_port = port_of(flag(argv, "metrics_address"))
        exposed = {int(port) for line in stage["EXPOSE"] for port in line.split()}
        self.assertEqual(exposed, {grpc_port, metrics_port})
        user = stage["USER"][-1].split(":")[0]
        self.assertTrue(user.isdigit() and int(user) > 0, "a numeric non-root USER: " + user)

        # The health check: matserve-cli health on the gRPC port, run against a real server.
        healthcheck = stage["HEALTHCHECK"][-1]
        probe = exec_form(healthcheck[healthcheck.index("CMD ") + 4:])
        self.assertEqual(probe[:2], ["matserve-cli", "health"])
        self.assertEqual(port_of(flag(probe, "target")), grpc_port)
        server = Server(argv)
        try:
            target = "127.0.0.1:%d" % server.port
            checked = run([program(probe[0]), *probe[1:], "--target=" + target])
            self.assertEqual(checked.returncode, 0, checked.stderr)
            self.assertIn("is SERVING", checked.stdout)
        finally:
            server.close()

    def test_compose(self):
        with open(os.path.join(ARGS.deploy, "compose.yaml")) as text:
            compose = yaml.safe_load(text)
        services = compose["services"]
        matserve = services["matserve"]
        entrypoint, cmd = image_command()
        argv = matserve.get("entrypoint", entrypoint) + matserve.get("command", cmd)
        self.assert_server_accepts(argv)
        grpc_port = port_of(flag(argv, "address"))
        metrics_port = port_of(flag(argv, "metrics_address"))
        published = {int(str(mapping).rsplit(":", 1)[1]) for mapping in matserve["ports"]}
        self.assertEqual(published, {grpc_port, metrics_port})
        build = matserve["build"]
        self.assertTrue(os.path.isfile(
            os.path.join(ARGS.deploy, build["context"], build["dockerfile"])))
        self.assertIn("CUDA_ARCHITECTURES", build["args"])
        devices = matserve["deploy"]["resources"]["reservations"]["devices"]
        self.assertTrue(any(device.get("driver") == "nvidia" and "gpu" in device["capabilities"]
                            for device in devices), devices)
        grace = seconds(flag(argv, "shutdown_grace") or "30s")
        self.assertGreaterEqual(seconds(matserve["stop_grace_period"]), grace + 5,
                                "stop_grace_period covers --shutdown_grace and the GOAWAY")

        # Prometheus scrapes this service's metrics port; Grafana reads that Prometheus.
        mounts = {}
        for name in ("prometheus", "grafana"):
            for volume in services[name]["volumes"]:
                source, target = volume.split(":")[:2]
                if source.startswith("."):
                    self.assertTrue(os.path.exists(os.path.join(ARGS.deploy, source)), volume)
                    mounts[target] = os.path.join(ARGS.deploy, source)
        config_file = flag(services["prometheus"]["command"], "config.file")
        config_dir, config_name = os.path.split(config_file)
        with open(os.path.join(mounts[config_dir], config_name)) as text:
            prometheus = yaml.safe_load(text)
        targets = [target for job in prometheus["scrape_configs"]
                   for static in job.get("static_configs", []) for target in static["targets"]]
        self.assertIn("matserve:%d" % metrics_port, targets)
        with open(os.path.join(mounts["/etc/grafana/provisioning"],
                               "datasources", "prometheus.yml")) as text:
            datasource = yaml.safe_load(text)["datasources"][0]["url"]
        prometheus_port = int(services["prometheus"]["ports"][0].rsplit(":", 1)[1])
        self.assertEqual(datasource, "http://prometheus:%d" % prometheus_port)
        with open(os.path.join(mounts["/etc/grafana/provisioning"],
                               "dashboards", "matserve.yml")) as text:
            provider_path = yaml.safe_load(text)["providers"][0]["options"]["path"]
        self.assertTrue(os.path.isfile(os.path.join(mounts[provider_path], "matserve.json")))

    def kubernetes(self):
        """The resources kustomization.yaml lists, by (kind, name)."""
        k8s = os.path.join(ARGS.deploy, "k8s")
        with open(os.path.join(k8s, "kustomization.yaml")) as text:
            kustomization = yaml.safe_load(text)
        resources = {}
        for path in kustomization["resources"]:
            with open(os.path.join(k8s, path)) as text:
                for resource in yaml.safe_load_all(text):
                    namespace = resource["metadata"].get("namespace")
                    if resource["kind"] != "Namespace":
                        self.assertEqual(namespace, kustomization["namespace"], path)
                    resources[(resource["kind"], resource["metadata"]["name"])] = resource
        return kustomization, resources

    def test_kubernetes_server(self):
        _, resources = self.kubernetes()
        deployment = resources[("Deployment", "matserve")]
        pod = deployment["spec"]["template"]
        (container,) = pod["spec"]["containers"]
        entrypoint, cmd = image_command()
        argv = container.get("command", entrypoint) + container.get("args", cmd)
        self.assert_server_accepts(argv)
        grpc_port = port_of(flag(argv, "address"))
        metrics_port = port_of(flag(argv, "metrics_address"))
        ports = {port["name"]: port["containerPort"] for port in container["ports"]}
        self.assertEqual(ports, {"grpc": grpc_port, "metrics": metrics_port})

        quantities = container["resources"]
        self.assertEqual(quantities["limits"]["nvidia.com/gpu"], 1)
        for kind in ("requests", "limits"):
            self.assertIn("cpu", quantities[kind])
            self.assertIn("memory", quantities[kind])

        # Probes: native gRPC on the gRPC port, for services the server reports on.
        server = Server(argv)
        try:
            for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                grpc = container[probe]["grpc"]
                self.assertIn(grpc["port"], (grpc_port, "grpc"), probe)
                checked = run([ARGS.cli, "health", "--target=127.0.0.1:%d" % server.port,
                               "--service=" + grpc.get("service", "")])
                self.assertEqual(checked.returncode, 0, "%s: %s" % (probe, checked.stderr))
        finally:
            server.close()

        # The drain fits the grace period: preStop, then --shutdown_grace, then the GOAWAY.
        pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
        self.assertEqual(pre_stop[0], "sleep")
        grace = seconds(flag(argv, "shutdown_grace") or "30s")
        self.assertGreaterEqual(pod["spec"]["terminationGracePeriodSeconds"],
                                int(pre_stop[1]) + grace + 5)

        # Non-root as the image's user, read-only, nothing to escalate to.
        user = int(dockerfile()["USER"][-1].split(":")[0])
        self.assertEqual(pod["spec"]["securityContext"]["runAsUser"], user)
        security = container["securityContext"]
        self.assertTrue(security["runAsNonRoot"])
        self.assertTrue(security["readOnlyRootFilesystem"])
        self.assertFalse(security["allowPrivilegeEscalation"])
        self.assertEqual(security["capabilities"]["drop"], ["ALL"])

        annotations = pod["metadata"]["annotations"]
        self.assertEqual(annotations["prometheus.io/scrape"], "true")
        self.assertEqual(int(annotations["prometheus.io/port"]), metrics_port)

        # Both Services select these pods and reach named container ports; one is headless.
        labels = pod["metadata"]["labels"]
        for name, headless in (("matserve", False), ("matserve-headless", True)):
            service = resources[("Service", name)]["spec"]
            self.assertEqual(service.get("clusterIP") == "None", headless, name)
            self.assertLessEqual(service["selector"].items(), labels.items(), name)
            for port in service["ports"]:
                self.assertIn(port["targetPort"], ports, name)
        policy = resources[("NetworkPolicy", "matserve")]["spec"]
        self.assertLessEqual(policy["podSelector"]["matchLabels"].items(), labels.items())
        self.assertEqual({port["port"] for rule in policy["ingress"] for port in rule["ports"]},
                         set(ports))

    def test_kubernetes_load_job(self):
        _, resources = self.kubernetes()
        job = resources[("Job", "matserve-load")]["spec"]["template"]
        (container,) = job["spec"]["containers"]
        argv = container["command"] + container["args"]
        self.assertEqual(os.path.basename(argv[0]), "matserve-load")
        checked = run([program(argv[0]), *argv[1:], "--check_config"])
        self.assertEqual(checked.returncode, 0, checked.stderr)

        # Round-robin over the headless Service's pods, on its gRPC port.
        target = re.fullmatch(r"dns:///([a-z0-9-]+):(\d+)", flag(argv, "target"))
        self.assertIsNotNone(target, flag(argv, "target"))
        service = resources[("Service", target.group(1))]["spec"]
        self.assertEqual(service["clusterIP"], "None")
        (port,) = [port for port in service["ports"] if port["port"] == int(target.group(2))]
        deployment = resources[("Deployment", "matserve")]["spec"]["template"]["spec"]
        (server,) = deployment["containers"]
        container_ports = {port["name"]: port["containerPort"] for port in server["ports"]}
        grpc_port = container_ports[port["targetPort"]]
        policy = resources[("NetworkPolicy", "matserve-load")]["spec"]
        self.assertIn(grpc_port, [port["port"] for rule in policy["egress"]
                                  for port in rule["ports"]])

    def test_kustomize_renders(self):
        if not ARGS.kubectl:
            self.skipTest("kubectl not found: the files are read one by one only")
        kustomization, resources = self.kubernetes()
        rendered = run([ARGS.kubectl, "kustomize", os.path.join(ARGS.deploy, "k8s")])
        self.assertEqual(rendered.returncode, 0, rendered.stderr)
        built = {(r["kind"], r["metadata"]["name"]): r for r in yaml.safe_load_all(rendered.stdout)}
        self.assertEqual(set(built), set(resources))
        # The ServiceMonitor component, from an overlay beside a copy of deploy/k8s.
        with tempfile.TemporaryDirectory() as overlay:
            shutil.copytree(os.path.join(ARGS.deploy, "k8s"), os.path.join(overlay, "base"))
            with open(os.path.join(overlay, "kustomization.yaml"), "w") as text:
                yaml.safe_dump({"resources": ["base"], "components": ["base/servicemonitor"]},
                               text)
            rendered = run([ARGS.kubectl, "kustomize", overlay])
            self.assertEqual(rendered.returncode, 0, rendered.stderr)
            kinds = [r["kind"] for r in yaml.safe_load_all(rendered.stdout)]
            self.assertIn("ServiceMonitor", kinds)
        monitor = [r for r in yaml.safe_load_all(rendered.stdout) if r["kind"] == "ServiceMonitor"]
        (endpoint,) = monitor[0]["spec"]["endpoints"]
        service_ports = [p["name"] for p in resources[("Service", "matserve")]["spec"]["ports"]]
        self.assertIn(endpoint["port"], service_ports)
        self.assertEqual(monitor[0]["metadata"]["namespace"], kustomization["namespace"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for name in ("server", "cli", "load", "deploy"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--kubectl", default="")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
