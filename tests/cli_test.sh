#!/usr/bin/env bash
# cli_test.sh SERVER CLI: matserve-cli against a real server: right answers exit 0 and say OK, a
# request the server refuses prints its status code and message and exits 1; health exits 0 while
# the server is SERVING and 1 with the reason otherwise.
set -uo pipefail
server_bin=$1 cli=$2
log=$(mktemp)
"$server_bin" --address=127.0.0.1:0 --metrics_address=127.0.0.1:0 --backend=cpu \
  --max_elements=1000000 >"$log" 2>&1 &
server=$!
trap 'kill -9 $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 300); do grep -q "serving on" "$log" && break; sleep 0.1; done
target=$(grep -o "serving on 127.0.0.1:[0-9]*" "$log" | cut -d' ' -f3)
[ -n "$target" ] || { echo "server did not start:"; cat "$log"; exit 1; }
failures=0 checks=0
expect() {  # expect EXIT_CODE PATTERN ARGS...
  local want=$1 pattern=$2; shift 2
  local output rc
  checks=$((checks + 1))
  output=$("$cli" --target "$target" "$@" 2>&1); rc=$?
  if [ $rc -eq "$want" ] && grep -q "$pattern" <<<"$output"; then
    echo "ok: matserve-cli $*"
  else
    echo "FAILED: matserve-cli $* exited $rc (want $want), output: $output"; failures=$((failures + 1))
  fi
}
expect 0 "relative error .*: OK" multiply --m 67 --k 129 --n 33
expect 0 "bit-exact: OK" transpose --rows 1 --cols 4099
expect 1 "INVALID_ARGUMENT: a is 0x5: every dimension must be at least 1" multiply --m 0 --k 5 --n 3
expect 1 "RESOURCE_EXHAUSTED: input is 2000x1000 = 2000000 elements" transpose --rows 2000 --cols 1000
expect 2 "matserve-cli multiply" frobnicate
expect 0 "bit-exact: OK" transpose --rows 3 --cols 5 --target "$target,$target"
expect 2 "an empty target" transpose --target "$target,,$target"
expect 0 "^$target: the server is SERVING$" health
expect 0 "matserve.v1.MatrixService is SERVING" health --service=matserve.v1.MatrixService
expect 1 "NOT_FOUND" health --service=no.such.Service
checks=$((checks + 1))
kill -TERM $server; wait $server; rc=$?
[ $rc -eq 0 ] || { echo "FAILED: server exited $rc on SIGTERM"; failures=$((failures + 1)); }
expect 1 "UNAVAILABLE" health --timeout=5s
echo "$((checks - failures)) passed, $failures failed"
[ $failures -eq 0 ]
