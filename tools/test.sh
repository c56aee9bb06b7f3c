#!/usr/bin/env bash
# test.sh: installs the dependencies, builds, and runs the whole test suite through CTest.
# GPU tests are skipped, each with a message, where no CUDA device is visible.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)"
