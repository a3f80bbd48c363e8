#!/usr/bin/env bash
# A storm of streams in paired rounds (the design of bench/throughput_ab.sh): each round opens
# STREAMS streamed completions at once (bench/sse_load, an event every EVENT_DELAY_MS) straight
# to the fake upstream, through contextgate and through nginx (1 worker each; the order turns
# every round), and takes each proxy's added time to first byte and added event arrival, p50
# and p99, over direct's in that same round. The summary is the median of the rounds.
#   ROUNDS=7 STREAMS=1000 EVENT_DELAY_MS=50 bench/stream_storm.sh
#   A=/path/to/contextgate bench/stream_storm.sh
#   COLD=1 bench/stream_storm.sh   # both proxies started afresh before each round: every stream
#                                  # opens its upstream connection in the storm
set -euo pipefail
ROUNDS="${ROUNDS:-7}"
STREAMS="${STREAMS:-1000}"
EVENT_DELAY_MS="${EVENT_DELAY_MS:-50}"
A="${A:-build/contextgate}"
COLD="${COLD:-0}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_build contextgate contextgate-fake-upstream sse_load
start_fake
declare -A port=()
start_proxies() {
  if [ -n "${contextgate_pid:-}" ]; then
    kill "$contextgate_pid" "$nginx_master" 2>/dev/null || true
    wait "$contextgate_pid" "$nginx_master" 2>/dev/null || true
  fi
  start_gateway contextgate "$A" 1
  start_nginx 1
  nginx_master=${pids[-1]}
  # shellcheck disable=SC2154  # set by start_fake, start_gateway and start_nginx
  port=([direct]=$fake_port [contextgate]=$contextgate_port [nginx]=$nginx_port)
}
start_proxies
order=(direct contextgate nginx)

echo "# $STREAMS concurrent streams, an event every ${EVENT_DELAY_MS} ms, $ROUNDS paired rounds$([ "$COLD" = 1 ] && echo ", proxies cold each round"): added over direct, microseconds"
printf '%-6s %-12s %10s %10s %10s %10s\n' round target "ttfb p50" "ttfb p99" "event p50" "event p99"
for round in $(seq "$ROUNDS"); do
  [ "$COLD" = 1 ] && [ "$round" -gt 1 ] && start_proxies
  declare -A r=()
  for i in 0 1 2; do
    t=${order[$(((i + round) % 3))]}
    read -r t50 t99 e50 e99 ok < <(build/sse_load "${port[$t]}" "$STREAMS" "$EVENT_DELAY_MS")
    [ "$ok" = "$STREAMS" ] || { echo "$t: only $ok of $STREAMS streams completed" >&2; exit 1; }
    r[$t]="$t50 $t99 $e50 $e99"
  done
  read -r d50 d99 de50 de99 <<<"${r[direct]}"
  for t in contextgate nginx; do
    read -r t50 t99 e50 e99 <<<"${r[$t]}"
    added="$((t50 - d50)) $((t99 - d99)) $((e50 - de50)) $((e99 - de99))"
    echo "$added" >>"$tmp/$t.added"
    # shellcheck disable=SC2086
    printf '%-6s %-12s %10d %10d %10d %10d\n' "$round" "$t" $added
  done
done
median_col() { awk -v c="$2" '{ print $c }' "$tmp/$1.added" | sort -g |
  awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median over $ROUNDS rounds:"
for t in contextgate nginx; do
  printf '%-6s %-12s %10.0f %10.0f %10.0f %10.0f\n' "" "$t" "$(median_col "$t" 1)" \
    "$(median_col "$t" 2)" "$(median_col "$t" 3)" "$(median_col "$t" 4)"
done
