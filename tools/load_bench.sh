#!/usr/bin/env bash
# load_bench.sh OUT_DIR: matserve-load against matserve-server and, beside every level, against
# matserve-echo-server (the transport floor: the same bytes through gRPC, no compute) on loopback:
# multiply 64^3, 256^3, 1024^3, 4096^3 and transpose 4096^2 at concurrency 1, 16 and 256, answers
# checked every 50th. Writes load_bench.csv (one row per workload and level), load_bench.md (the
# table, with the device, date and commands) and the logs into OUT_DIR. About 4 minutes.
#
# Here, first:  cmake --build build && tools/pack_gpu.sh   (fills .device/)
# There:        tools/load_bench.sh "$OUT"
# Settings from the environment:
#   BIN=.device/bin   where the programs are (their libraries in BIN/../lib, if that exists)
#   BACKEND=cuda      matserve-server's --backend (cpu to try the script on a machine with no GPU)
#   QUICK=1           tiny shapes, levels 1 and 4, half-second runs: a check of the script itself
#   CHANNELS=4        matserve-load --channels (connections per target)
#   MIXES=..., LEVELS=...   run only these workloads / concurrencies
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/load_bench.sh OUT_DIR}
mkdir -p "$out"
bin=${BIN:-.device/bin}
[ -d "$bin/../lib" ] && export LD_LIBRARY_PATH=$(cd "$bin/../lib" && pwd):${LD_LIBRARY_PATH:-}
backend=${BACKEND:-cuda}
channels=${CHANNELS:-4}

# The workloads, and the warmup of each level (WARMUP MIX CONCURRENCY). The 64 MiB messages of
# 4096^3 and 4096^2 take seconds a round at concurrency 256: a longer warmup lets every call of
# the first round return before the window opens.
if [ "${QUICK:-0}" = 1 ]; then
  mixes="multiply:16x16x16 multiply:128x96x64 transpose:256x128"
  levels="1 4"
  duration=0.5s
  warmup() { echo 0.2s; }
else
  mixes="multiply:64x64x64 multiply:256x256x256 multiply:1024x1024x1024 multiply:4096x4096x4096
         transpose:4096x4096"
  levels="1 16 256"
  duration=3s
  warmup() { case "$1:$2" in *4096*:256) echo 20s ;; *) echo 1s ;; esac; }
fi
# At concurrency 256 a round of 4096^3 (192 MB a call) takes about 10 s on an H200 host: the
# window is longer there, so that it holds whole rounds (the 8 s warmup and 3 s window tried
# first saw no call complete).
window() { case "$1:$2" in *4096*:256) echo 15s ;; *) echo "$duration" ;; esac; }
mixes=${MIXES:-$mixes}
levels=${LEVELS:-$levels}

pids=()
trap 'for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done' EXIT
start() {  # start NAME PROGRAM FLAGS...: sets $target to the host:port it serves on
  local name=$1 program=$2; shift 2
  "$bin/$program" --address=127.0.0.1:0 "$@" >"$out/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 600); do grep -q "serving on" "$out/$name.log" && break; sleep 0.1; done
  target=$(grep -o "serving on 127.0.0.1:[0-9]*" "$out/$name.log" | cut -d' ' -f3)
  [ -n "$target" ] || { echo "$program did not start:"; cat "$out/$name.log"; exit 1; }
  head -1 "$out/$name.log"
}
start server matserve-server --backend="$backend"
service=$target
start echo matserve-echo-server
floor=$target

device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
device=${device:-$(uname -n), no GPU}
common="--channels=$channels --deadline=120s --verify_every=50 --output=csv"
csv=$out/load_bench.csv
rm -f "$csv"
failed=0
for mix in $mixes; do
  for level in $levels; do
    name=$(tr ':x' '__' <<<"$mix")_c$level
    echo "=== $mix at concurrency $level (warmup $(warmup "$mix" "$level"), $(window "$mix" "$level"))"
    "$bin/matserve-load" --target="$service" --floor_target="$floor" --mix="$mix" \
      --concurrency="$level" --warmup="$(warmup "$mix" "$level")" \
      --duration="$(window "$mix" "$level")" \
      $common >"$out/$name.csv" 2>"$out/$name.log"
    rc=$?
    [ $rc -eq 0 ] || { echo "!!! exit $rc:"; tail -5 "$out/$name.log"; failed=1; }
    [ -f "$csv" ] || head -1 "$out/$name.csv" >"$csv"
    tail -n +2 "$out/$name.csv" >>"$csv"
  done
done
kill -TERM "${pids[@]}"
wait

# The table: one row per workload and level.
{
  echo "matserve-load on $device, $(date -u +%Y-%m-%d), matserve-server --backend=$backend"
  echo "against matserve-echo-server (the transport floor), loopback:"
  echo
  echo '```'
  echo "matserve-load --target=SERVER --floor_target=ECHO --mix=MIX --concurrency=N" \
       "--warmup=W --duration=D $common"
  echo '```'
  echo
  echo "| workload | concurrency | throughput (req/s) | GFLOP/s | payload GB/s | p50 ms |" \
       "p99 ms | floor (req/s) | of floor | errors | checked / wrong |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
  awk -F, 'function v(name) { return $col[name] }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { printf "| %s | %s | %.1f | %.2f | %.3f | %.3f | %.3f | %.1f | %.3f | %s | %s / %s |\n",
        v("mix"), v("concurrency"), v("throughput_rps"), v("gflops"), v("payload_gbps"),
        v("p50_ms"),
        v("p99_ms"), v("floor_rps"), v("fraction_of_floor"),
        v("errors") == "" ? "-" : v("errors"), v("verified"), v("mismatches") }' "$csv"
} >"$out/load_bench.md"
cat "$out/load_bench.md"
echo "load_bench: $([ $failed -eq 0 ] && echo "all runs exited 0" || echo "SOME RUNS FAILED")"
exit $failed
