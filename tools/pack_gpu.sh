#!/usr/bin/env bash
# pack_gpu.sh [BUILD_DIR]: copies the programs that tools/gpu_check.sh and tools/load_bench.sh
# run, and the libraries the GPU machine lacks, into .device/ (see DESIGN.md, "Running on a GPU").
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rm -rf .device
../shared/device/pack.sh .device "$build/server/matserve-server" "$build/client/matserve-cli" \
  "$build/tests/matserve_cuda_test" "$build/tests/matserve_e2e_cuda_test" \
  "$build/tests/matserve_e2e_test" "$build/kernels/bench/matserve-kernel-bench" \
  "$build/kernels/bench/matserve-kernel-fuzz" \
  "$build/client/matserve-load" "$build/server/matserve-echo-server"
# Debug info is most of the size, and the device tool carries 64 MiB at most.
strip --strip-debug .device/bin/* .device/lib/*
du -sh .device
