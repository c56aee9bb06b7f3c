#!/usr/bin/env bash
# gpu_check.sh: on the lent GPU machine, runs the GPU tests, the CUDA end-to-end tests,
# compute-sanitizer over the kernels, and a few matserve-cli calls against a CUDA server.
# Here, first:  cmake --build build && tools/pack_gpu.sh   (fills .device/)
# There:        bash tools/gpu_check.sh [PART...]   (logs go to $OUT when it is set)
# PARTs: tests (cuda_test and the end-to-end tests), fuzz (matserve-kernel-fuzz: 50 fresh random
# cases of each entry point against cuBLAS, under a minute on an H200, session 58), memcheck,
# racecheck, synccheck, cli; all by default. Together they take about half an hour of one GPU, more
# than the device tool's 10 minutes a call. On an H200 (session 67, 622 GPU tests): tests 4.5
# minutes, memcheck 3.2, racecheck 16 (350 tests), synccheck 3.7. So split the parts over calls,
# or over the GPUs of one host, and racecheck into shards with GoogleTest's own variables; a
# sharded run names its logs NAME.SHARD.log. On two H200s, racecheck in four shards took one call
# of 8.4 minutes:
#   shards() {  # shards GPU INDEX...
#     local gpu=$1 i; shift
#     for i; do CUDA_VISIBLE_DEVICES=$gpu GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i \
#       bash tools/gpu_check.sh racecheck; done
#   }
#   shards 0 0 1 & shards 1 2 3 & wait
# The device tool brings back at most 8 files from $OUT: point OUT elsewhere and put the logs
# into one archive under $OUT. The packed programs outgrew the tool's 64 MiB (session 24): carry
# them as one xz archive (45 MB at session 67) and unpack it there.
set -uo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.device/lib:${LD_LIBRARY_PATH:-}
export MATSERVE_SERVER_BINARY=$PWD/.device/bin/matserve-server
out=${OUT:-/tmp/matserve-gpu-check}
mkdir -p "$out"
bin=.device/bin
parts=" ${*:-tests fuzz memcheck racecheck synccheck cli} "
failed=0
step() {  # step NAME COMMAND...: runs it, logs it, remembers a failure
  local name=$1; shift
  echo "=== $name"
  local log=$out/$name${GTEST_SHARD_INDEX:+.$GTEST_SHARD_INDEX}.log
  "$@" >"$log" 2>&1
  local rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran|ERROR SUMMARY|^seed |^FAIL|^[0-9]+ failed$" \
    "$log" | head -20
  [ $rc -eq 0 ] || { echo "!!! $name failed (exit $rc)"; tail -30 "$log"; failed=1; }
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if [[ $parts == *" tests "* ]]; then
step cuda_test $bin/matserve_cuda_test
step e2e_cuda_test $bin/matserve_e2e_cuda_test
step e2e_cpu_test $bin/matserve_e2e_test
fi
if [[ $parts == *" fuzz "* ]]; then
step kernel_fuzz $bin/matserve-kernel-fuzz --cases=50
fi
if [[ $parts == *" memcheck "* ]]; then
step sanitizer_memcheck compute-sanitizer --tool memcheck --error-exitcode 1 \
  $bin/matserve_cuda_test --gtest_filter="-*1000x3000x777*:*513x1025x257*:$(
    for v in naive tiled register_blocked; do
      printf '*/%s_512x8195x*:*/%s_1539x*:*/%s_1100x4000x*:*/%s_1001x1000x*:' $v $v $v $v
      printf '*/%s_1000x1000x777*:*/%s_1000x999x772*:*/%s_1000x300x2000*:' $v $v $v
    done)"
fi
if [[ $parts == *" racecheck "* ]]; then
step sanitizer_racecheck compute-sanitizer --tool racecheck --error-exitcode 1 \
  $bin/matserve_cuda_test \
  --gtest_filter='*127x131x137*:*4097x33x5*:*Batched*:*Grouped*:*/warp_tiled_1100x4000x527*:*/warp_tiled_1001x1000x772*:*/warp_tiled_1000x1000x777*'
fi
if [[ $parts == *" synccheck "* ]]; then
step sanitizer_synccheck compute-sanitizer --tool synccheck --error-exitcode 1 \
  $bin/matserve_cuda_test \
  --gtest_filter='*Batched*:*Grouped*:*wide*:*/warp_tiled_1100x4000x527*:*/warp_tiled_1001x1000x772*:*/warp_tiled_1000x1000x777*'

fi
if [[ $parts == *" cli "* ]]; then
echo "=== matserve-cli against --backend=cuda"
$bin/matserve-server --address=127.0.0.1:50051 --backend=cuda >"$out/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q "serving on" "$out/server.log" && break; sleep 0.1; done
cat "$out/server.log"
for shape in "--m 1 --k 1 --n 1" "--m 512 --k 512 --n 512" "--m 1000 --k 3000 --n 777" \
             "--m 2048 --k 2048 --n 2048"; do
  $bin/matserve-cli multiply $shape || failed=1
done
for shape in "--rows 1000 --cols 3000" "--rows 8192 --cols 8192" "--rows 1 --cols 100003"; do
  $bin/matserve-cli transpose $shape || failed=1
done
$bin/matserve-cli multiply --m 3 --k 4 --n 5 --timeout 0.000001s; echo "(expected DEADLINE_EXCEEDED above)"
kill -TERM $server; wait $server; echo "server exit status $?"
tail -2 "$out/server.log"
fi
echo "gpu_check ($(echo $parts)): $([ $failed -eq 0 ] && echo ALL PASSED || echo FAILURES)"
exit $failed
