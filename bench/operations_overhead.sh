#!/usr/bin/env bash
# What metrics, token usage and a rate-limited virtual key cost per passthrough request: CPU time
# of the proxy process per request at a fixed rate (utime+stime from /proc, as in
# cpu_per_request.sh), 1 worker each, side by side in one run:
#   off    contextgate with metrics off and no virtual key (the cheapest configuration)
#   on     contextgate with /metrics, usage observation and every request authenticated by a
#          virtual key with rpm, tpm and max_parallel limits (memory backend)
#   nginx  nginx as a plain keep-alive reverse proxy, the reference
#
#   bench/operations_overhead.sh
#   RATE=2000 ROUNDS=5 DURATION=5s bench/operations_overhead.sh
set -euo pipefail
RATE="${RATE:-2000}"
ROUNDS="${ROUNDS:-5}"
DURATION="${DURATION:-5s}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build contextgate contextgate-fake-upstream
start_fake
start_gateway off build/contextgate 1 "metrics:
  enabled: false"
KEY=sk-bench-0123456789abcdef
start_gateway on build/contextgate 1 "admin:
  keys:
    - name: bench
      key: $KEY
      rpm: 100000000
      tpm: 100000000000
      max_parallel: 100000"
start_nginx 1
nginx_pid=$nginx_worker_pid

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
echo "# CPU per request at ${RATE} req/s, ${DURATION} per run, 1 worker each (median of $ROUNDS rounds)"
declare -A results
for round in $(seq "$ROUNDS"); do
  line="round $round:"
  for side in off on nginx; do
    pid_var="${side}_pid"; port_var="${side}_port"
    before="$(cpu_ticks "${!pid_var}")"
    out="$(hey -z "$DURATION" -c 10 -q $((RATE / 10)) -m POST -T application/json \
      -H "Authorization: Bearer $KEY" -d "$body" \
      "http://127.0.0.1:${!port_var}/v1/chat/completions")"
    after="$(cpu_ticks "${!pid_var}")"
    ok="$(echo "$out" | awk '/\[200\]/ { n += $2 } END { print n + 0 }')"
    other="$(echo "$out" | awk '/^  \[[0-9]+\]/ && !/\[200\]/ { printf " %s%s", $1, $2 }')"
    [ -z "$other" ] || echo "  ($side: non-200 answers:$other)" >&2
    us="$(awk -v t=$((after - before)) -v n="${ok:-0}" -v hz="$(getconf CLK_TCK)" \
      'BEGIN { if (n == 0) print "nan"; else printf "%.1f", t * 1000000 / hz / n }')"
    results[$side]+="$us "
    line+="  $side $us us"
  done
  echo "$line"
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
off="$(echo "${results[off]}" | median)"
on="$(echo "${results[on]}" | median)"
ng="$(echo "${results[nginx]}" | median)"
echo "median: off $off us, on $on us, nginx $ng us"
awk -v off="$off" -v on="$on" -v ng="$ng" 'BEGIN {
  printf "on/off %.3f (added %+.1f%%), off/nginx %.2f, on/nginx %.2f\n", on / off, (on / off - 1) * 100, off / ng, on / ng }'
