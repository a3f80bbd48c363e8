#!/usr/bin/env bash
# CPU time per proxied request at a fixed, moderate rate: contextgate against nginx (1 worker
# each), or against another contextgate binary for an A/B of a change. Throughput under
# saturation is noisy on a shared 2-core machine; CPU time per request at a fixed rate
# (utime+stime of the proxy process over the run, from /proc) is a steadier yardstick.
#
# Each round measures both, in turns (A first in odd rounds, B first in even ones, so that drift
# in the machine's load falls on both); the last line gives the medians and the median of the
# per-round ratios.
#
#   bench/cpu_per_request.sh                       # build/contextgate vs nginx
#   B=/path/to/old/contextgate bench/cpu_per_request.sh   # build/contextgate vs another build
#   A=/path/to/new B=/path/to/old bench/cpu_per_request.sh   # two builds, neither in build/
#   B=unpriced bench/cpu_per_request.sh   # pricing's cost: the same build, nothing priced in B
#   B=guardrails bench/cpu_per_request.sh   # the guardrails' cost: the same build, B masks
#                                           # secrets and PII in each request and answer
#   RATE=2000 ROUNDS=5 bench/cpu_per_request.sh
#   TOGETHER=1 … bench/cpu_per_request.sh   # A and B loaded at the same time, each at RATE: what
#                                           # else the machine does then falls on both alike
#   PIN=1 … bench/cpu_per_request.sh   # the proxies on processor 1, the fake and the load on 0
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

echo "# CPU per request at ${RATE} req/s, ${DURATION} per run: A = $A, B = $B${TOGETHER:+ (together)}"
: >"$tmp/rounds"
for round in $(seq "$ROUNDS"); do
  if [ -n "${TOGETHER:-}" ]; then
    cpu_us_per_request_together "$a_pid" "$a_port" "$b_pid" "$b_port"
  else
    order="a b"
    [ $((round % 2)) -eq 1 ] || order="b a"
    for side in $order; do
      pid_var="${side}_pid"; port_var="${side}_port"
      printf -v "us_$side" '%s' "$(cpu_us_per_request "${!pid_var}" "${!port_var}")"
    done
  fi
  echo "round $round:  A $us_a us/request  B $us_b us/request"
  echo "$us_a $us_b" >>"$tmp/rounds"
done
# The medians of each side and of the per-round ratios, and how often A cost more.
awk 'function median(v, n,   i, j, t) {
       for (i = 2; i <= n; i++)
         for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
       return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
     }
     { a[NR] = $1; b[NR] = $2; r[NR] = $1 / $2; if ($1 > $2) higher++ }
     END { printf "median A %.1f us, B %.1f us; median of the per-round ratios A/B %.3f; A higher in %d of %d\n",
             median(a, NR), median(b, NR), median(r, NR), higher, NR }' "$tmp/rounds"
