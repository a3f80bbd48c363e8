#!/usr/bin/env bash
# What the response cache costs and saves per request, side by side in one run: the same chat
# completion sent back to back by one client (wrk -c1), 1 worker each:
#   direct   the fake upstream itself (the floor)
#   nocache  contextgate without a cache
#   miss     contextgate with a cache that looks up, reads the answer and drops it (its
#            max_entry_bytes is too small to keep it): every request a miss, the store's work
#            done except the insert
#   hit      contextgate with a cache holding the answer: no upstream call
# For each: latency p50 and p99 (microseconds, from wrk) and, for contextgate, its CPU per
# request (utime+stime from /proc). Medians of ROUNDS rounds, the order turning each round.
#   bench/cache.sh
#   ROUNDS=5 DURATION=5s bench/cache.sh
set -euo pipefail
ROUNDS="${ROUNDS:-5}"
DURATION="${DURATION:-5s}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build contextgate contextgate-fake-upstream
start_fake
cached() {  # the fake upstream with cache: {ttl: 1h}, and the top-level cache section $1
  printf '%s\n' "upstreams:" "  - name: fake" "    base_url: http://127.0.0.1:$fake_port/v1" \
    "    max_idle_connections: 4096" "    cache: {ttl: 1h}" "$1"
}
start_gateway nocache build/contextgate 1
# start_gateway appends its extra YAML after its own sections: a second `upstreams` would be a
# duplicate key, so the cached gateways get a whole configuration of their own.
start_cached() {
  local name=$1 section=$2
  printf '%s\n' "server:" "  listen: 127.0.0.1:0" "  workers: 1" "logging:" "  access_log: false" \
    "context:" "  data_dir: $tmp/$name.data" >"$tmp/$name.yaml"
  cached "$section" >>"$tmp/$name.yaml"
  build/contextgate serve --config "$tmp/$name.yaml" 2>"$tmp/$name.err" &
  pids+=($!)
  printf -v "${name}_pid" '%s' "$!"
  printf -v "${name}_port" '%s' "$(wait_for "$tmp/$name.err" 'listening on http://127.0.0.1:([0-9]+)')"
}
start_cached miss "cache: {max_entry_bytes: 16}"
start_cached hit "cache: {max_bytes: 64MiB}"
direct_port=$fake_port
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
curl -s -o /dev/null -H 'content-type: application/json' -d "$body" \
  "http://127.0.0.1:$hit_port/v1/chat/completions"  # the entry the hits are served from

cat >"$tmp/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
LUA
to_us() {  # "812.00us" | "1.23ms" | "2.00s" -> microseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1000000; else print n }'
}

# measure SIDE: "p50_us p99_us cpu_us" for one client sending requests back to back (wrk -c1:
# the latency of one request, no queue); cpu "-" for direct.
measure() {
  local side=$1 port_var="${1}_port" pid_var="${1}_pid" before after out n
  [ "$side" = direct ] || before="$(awk '{ print $14 + $15 }' "/proc/${!pid_var}/stat")"
  out="$(wrk -t1 -c1 -d"$DURATION" --latency -s "$tmp/post.lua" \
    "http://127.0.0.1:${!port_var}/v1/chat/completions")"
  if echo "$out" | grep -q "Non-2xx"; then echo "$side: non-2xx answers" >&2; exit 1; fi
  n="$(echo "$out" | awk '/requests in/ { print $1 }')"
  local p50 p99
  p50="$(to_us "$(echo "$out" | awk '$1 == "50%" { print $2 }')")"
  p99="$(to_us "$(echo "$out" | awk '$1 == "99%" { print $2 }')")"
  if [ "$side" = direct ]; then
    echo "$p50 $p99 -"
  else
    after="$(awk '{ print $14 + $15 }' "/proc/${!pid_var}/stat")"
    awk -v p50="$p50" -v p99="$p99" -v t=$((after - before)) -v n="$n" -v hz="$(getconf CLK_TCK)" \
      'BEGIN { printf "%s %s %.1f\n", p50, p99, t * 1000000 / hz / n }'
  fi
}

sides=(direct nocache miss hit)
echo "# one client back to back (wrk -c1), ${DURATION} per run, 1 worker each, $ROUNDS rounds (medians)"
for round in $(seq "$ROUNDS"); do
  for i in 0 1 2 3; do
    side=${sides[$(((i + round) % 4))]}
    measure "$side" >>"$tmp/$side.rows"
  done
done
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
d50="$(awk '{ print $1 }' "$tmp/direct.rows" | median)"
d99="$(awk '{ print $2 }' "$tmp/direct.rows" | median)"
printf '%-8s %10s %10s %12s %12s %14s\n' side "p50 us" "p99 us" "p50 vs dir" "p99 vs dir" "cpu us/req"
for side in "${sides[@]}"; do
  p50="$(awk '{ print $1 }' "$tmp/$side.rows" | median)"
  p99="$(awk '{ print $2 }' "$tmp/$side.rows" | median)"
  cpu="$( [ "$side" = direct ] && echo - || awk '{ print $3 }' "$tmp/$side.rows" | median)"
  awk -v s="$side" -v a="$p50" -v b="$p99" -v da="$d50" -v db="$d99" -v c="$cpu" \
    'BEGIN { printf "%-8s %10.0f %10.0f %+12.0f %+12.0f %14s\n", s, a, b, a - da, b - db, c }'
done
