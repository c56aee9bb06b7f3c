#!/usr/bin/env bash
# build.sh [BUILD_DIR]: configures (once) and builds matserve; CUDA on when nvcc is found.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja
cmake --build "$build"
