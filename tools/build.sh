#!/usr/bin/env bash
# build.sh [BUILD_DIR [CMAKE_ARGS...]]: configures (once, with CMAKE_ARGS) and builds matserve;
# CUDA on when nvcc is found. deploy/Dockerfile passes the architectures and turns the tests off.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ $# -gt 0 ]; then shift; fi
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja "$@"
cmake --build "$build"
