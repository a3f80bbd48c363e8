#!/usr/bin/env bash
# Saturated throughput of contextgate against nginx (or against another contextgate build) in
# paired rounds: each round runs wrk against both, in turn (which one goes first alternates), and
# prints their requests per second and the ratio; the summary is the median of the rounds'
# ratios. On a shared machine the load around a run changes from minute to minute, and two runs
# side by side compare better than medians taken over a whole benchmark (bench/passthrough.sh).
#
#   bench/throughput_ab.sh                                  # build/contextgate vs nginx, 1 worker
#   WORKERS=2 ROUNDS=9 bench/throughput_ab.sh
#   A=/path/to/new B=/path/to/old bench/throughput_ab.sh
set -euo pipefail
ROUNDS="${ROUNDS:-7}"
DURATION="${DURATION:-5s}"
WORKERS="${WORKERS:-1}"
CONNS="${CONNS:-50}"
A="${A:-build/contextgate}"
B="${B:-nginx}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build contextgate contextgate-fake-upstream
start_fake
start_a_and_b "$WORKERS"

body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
cat >"$tmp/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA

# rps PORT: requests per second of one wrk run against PORT.
rps() {
  wrk -t1 -c"$CONNS" -d"$DURATION" -s "$tmp/post.lua" "http://127.0.0.1:$1/v1/chat/completions" |
    awk '/Requests\/sec/ { print $2 }'
}

echo "# saturated throughput, wrk -t1 -c$CONNS -d$DURATION, $WORKERS worker(s) each: A = $A, B = $B"
ratios=()
# a_port and b_port are set by start_a_and_b.
# shellcheck disable=SC2154
for round in $(seq "$ROUNDS"); do
  if ((round % 2)); then
    a=$(rps "$a_port"); b=$(rps "$b_port")
  else
    b=$(rps "$b_port"); a=$(rps "$a_port")
  fi
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
  ratios+=("$ratio")
  echo "round $round:  A $a req/s  B $b req/s  A/B $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -g |
  awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
         printf "median A/B over %d rounds: %.3f (lowest %.3f, highest %.3f)\n", NR, m, v[1], v[NR] }'
