#!/usr/bin/env bash
# install_deps.sh: the Debian 12 / Ubuntu 24.04 packages matserve builds and tests with.
# Runs apt-get as root (through sudo when not root). CUDA is optional: with nvcc at
# /usr/local/cuda/bin (or on PATH) the CUDA backend is built too.
set -euo pipefail
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# Metrics: prometheus-cpp-dev (the server's /metrics), libbenchmark-dev (matserve-metrics-bench)
# and prometheus (the server and promtool, for the tests) go by these names on Ubuntu 24.04 too.
$sudo apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config \
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libabsl-dev \
  libeigen3-dev libgtest-dev libgmock-dev python3 python3-grpcio python3-protobuf \
  prometheus-cpp-dev libbenchmark-dev prometheus >/dev/null
