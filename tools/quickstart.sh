#!/usr/bin/env bash
# quickstart.sh: installs the dependencies, builds, starts matserve-server on :50051 in the
# background and makes a short demo call with matserve-cli. The server keeps running.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh build
build/server/matserve-server --address=0.0.0.0:50051 >matserve-server.log 2>&1 &
server=$!
for _ in $(seq 100); do grep -q "serving on" matserve-server.log && break; sleep 0.1; done
cat matserve-server.log
build/client/matserve-cli multiply --m 512 --k 512 --n 512 --target localhost:50051
build/client/matserve-cli transpose --rows 1000 --cols 3000 --target localhost:50051
echo "matserve-server is running (pid $server, log in matserve-server.log); stop it with: kill $server"
