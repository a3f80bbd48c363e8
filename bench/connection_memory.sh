#!/usr/bin/env bash
# What a connection and a stream cost in memory, contextgate against nginx (1 worker each, in
# front of the fake upstream): IDLE keep-alive clients that made one request and stay open, and
# STREAMS streamed completions held open after their first event (the fake stalls them). Each
# measurement starts the proxy afresh; the figure is (RSS with them held - RSS before) / count.
#   IDLE=10000 STREAMS=2000 bench/connection_memory.sh
set -euo pipefail
IDLE="${IDLE:-10000}"
STREAMS="${STREAMS:-2000}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_build contextgate contextgate-fake-upstream hold_connections
start_fake

rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }

# held PORT PID COUNT MODE: prints "KiB-before KiB-after reached" with COUNT connections in MODE
# held open against PORT (PID: the process whose memory is read).
held() {
  local port=$1 pid=$2 count=$3 mode=$4 before after reached=""
  sleep 0.5  # the proxy settles after its start (no event says when its allocator is done)
  before=$(rss_kib "$pid")
  rm -f "$tmp/hold.in" "$tmp/hold.out"
  mkfifo "$tmp/hold.in"
  build/hold_connections "$port" "$count" "$mode" <"$tmp/hold.in" >"$tmp/hold.out" &
  local holder=$!
  exec 4>"$tmp/hold.in"
  for _ in $(seq 1200); do
    reached=$(sed -nE 's/^ready ([0-9]+)$/\1/p' "$tmp/hold.out")
    [ -n "$reached" ] && break
    sleep 0.1
  done
  after=$(rss_kib "$pid")
  exec 4>&-
  wait "$holder"
  echo "$before $after ${reached:-0}"
}

printf '%-12s %-8s %8s %12s %12s %14s\n' target kind count "RSS before" "RSS held" "KiB each"
for kind in idle stream; do
  count=$IDLE; [ "$kind" = stream ] && count=$STREAMS
  for target in contextgate nginx; do
    if [ "$target" = contextgate ]; then
      start_gateway "cg_$kind" build/contextgate 1
      port_var="cg_${kind}_port"; pid_var="cg_${kind}_pid"
      port=${!port_var}; pid=${!pid_var}
    else
      start_nginx 1
      port=$nginx_port; pid=$nginx_worker_pid
    fi
    read -r before after reached < <(held "$port" "$pid" "$count" "$kind")
    [ "$reached" = "$count" ] || echo "($target: only $reached of $count $kind connections held)" >&2
    printf '%-12s %-8s %8s %9d MiB %9d MiB %14.1f\n' "$target" "$kind" "$reached" \
      $((before / 1024)) $((after / 1024)) "$(awk -v a="$after" -v b="$before" -v n="$reached" \
      'BEGIN { print n ? (a - b) / n : 0 }')"
    kill "$pid" 2>/dev/null || true
    [ "$target" = nginx ] && kill "${pids[-1]}" 2>/dev/null || true
  done
done
