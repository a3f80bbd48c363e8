#!/usr/bin/env bash
# CPU time per proxied request at a fixed, moderate rate: contextgate against nginx (1 worker
# each), or against another contextgate binary for an A/B of a change. Throughput under
# saturation is noisy on a shared 2-core machine; CPU time per request at a fixed rate
# (utime+stime of the proxy process over the run, from /proc) is a steadier yardstick.
#
#   bench/cpu_per_request.sh                       # build/contextgate vs nginx
#   B=/path/to/old/contextgate bench/cpu_per_request.sh   # build/contextgate vs another build
#   A=/path/to/new B=/path/to/old bench/cpu_per_request.sh   # two builds, neither in build/
#   RATE=2000 ROUNDS=5 bench/cpu_per_request.sh
set -euo pipefail
RATE="${RATE:-2000}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-5s}"
A="${A:-build/contextgate}"
B="${B:-nginx}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build contextgate contextgate-fake-upstream
start_fake
start_a_and_b 1

echo "# CPU per request at ${RATE} req/s, ${DURATION} per run: A = $A, B = $B"
for round in $(seq "$ROUNDS"); do
  line="round $round:"
  for side in a b; do
    pid_var="${side}_pid"; port_var="${side}_port"
    line+="  $(echo "$side" | tr a-b A-B) $(cpu_us_per_request "${!pid_var}" "${!port_var}") us/request"
  done
  echo "$line"
done
