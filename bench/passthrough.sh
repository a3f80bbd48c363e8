#!/usr/bin/env bash
# Passthrough benchmark: the same canned upstream (contextgate-fake-upstream) measured directly,
# through contextgate and through nginx as a plain keep-alive reverse proxy, side by side in one
# run and in interleaved rounds (the machine is shared and noisy: medians and ratios count).
#
#   bench/passthrough.sh                 # defaults below; results go to stdout
#   ROUNDS=5 DURATION=15s bench/passthrough.sh
#   SOAK=600 bench/passthrough.sh        # also: 10 minutes of load, gateway RSS sampled every 30 s
#   B=/path/to/old/contextgate bench/passthrough.sh   # that build as a fourth target, "before"
#   STREAMS=100 WORKERS=2 bench/passthrough.sh
#
# Measures: throughput (wrk, fixed connections), latency added at a fixed moderate rate (hey -q),
# 1000 concurrent SSE streams (bench/sse_load: time to first byte and per-event arrival), and the
# gateway's peak RSS. contextgate and nginx get the same worker count.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10s}"
WORKERS="${WORKERS:-1}"
CONNS="${CONNS:-50}"
RATE="${RATE:-1000}"            # requests/s for the fixed-load latency run
STREAMS="${STREAMS:-1000}"
EVENT_DELAY_MS="${EVENT_DELAY_MS:-50}"
SOAK="${SOAK:-0}"

bench_build contextgate contextgate-fake-upstream sse_load
ulimit -n "$(ulimit -Hn)"  # 1000 streams need ~2000 descriptors per proxy

start_fake
start_gateway contextgate build/contextgate "$WORKERS"
start_nginx "$WORKERS"

declare -A port=([direct]=$fake_port [contextgate]=$contextgate_port [nginx]=$nginx_port)
targets=(direct contextgate nginx)
if [ -n "${B:-}" ]; then
  start_gateway before "$B" "$WORKERS"
  port[before]=$before_port
  targets+=(before)
fi
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
cat >"$tmp/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer sk-bench"
EOF

to_us() {  # "812.00us" | "1.23ms" | "2.00s" -> microseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1000000; else print n }'
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "# contextgate passthrough benchmark  $(date -u +%FT%TZ)  $(nproc) cores, $WORKERS worker(s) each"
echo "# rounds=$ROUNDS duration=$DURATION conns=$CONNS rate=${RATE}/s streams=$STREAMS event_delay=${EVENT_DELAY_MS}ms"

for round in $(seq "$ROUNDS"); do
  for t in "${targets[@]}"; do
    url="http://127.0.0.1:${port[$t]}/v1/chat/completions"
    out="$(wrk -t1 -c"$CONNS" -d"$DURATION" --latency -s "$tmp/post.lua" "$url")"
    echo "$out" | awk '/Requests\/sec/ { print $2 }' >>"$tmp/$t.rps"
    to_us "$(echo "$out" | awk '$1 == "50%" { print $2 }')" >>"$tmp/$t.p50"
    to_us "$(echo "$out" | awk '$1 == "99%" { print $2 }')" >>"$tmp/$t.p99"
    if echo "$out" | grep -q "Non-2xx"; then echo "$t: non-2xx responses" >&2; exit 1; fi

    # hey -q is per worker: 10 workers at RATE/10 each is a fixed RATE.
    out="$(hey -z "$DURATION" -c 10 -q $((RATE / 10)) -m POST -T application/json -d "$body" "$url")"
    echo "$out" | awk '/ 50% in/ { print $3 * 1000000 }' >>"$tmp/$t.fixed50"
    echo "$out" | awk '/ 99% in/ { print $3 * 1000000 }' >>"$tmp/$t.fixed99"

    read -r t50 t99 e50 e99 ok < <(build/sse_load "${port[$t]}" "$STREAMS" "$EVENT_DELAY_MS")
    [ "$ok" = "$STREAMS" ] || { echo "$t: only $ok of $STREAMS streams completed" >&2; exit 1; }
    echo "$t50" >>"$tmp/$t.ttfb50"; echo "$t99" >>"$tmp/$t.ttfb99"
    echo "$e50" >>"$tmp/$t.ev50"; echo "$e99" >>"$tmp/$t.ev99"
  done
done

m() { median <"$tmp/$1.$2"; }
echo
echo "## Throughput: wrk -t1 -c$CONNS -d$DURATION, POST /v1/chat/completions (median of $ROUNDS)"
printf "%-12s %12s %10s %10s\n" target "req/s" "p50 us" "p99 us"
for t in "${targets[@]}"; do printf "%-12s %12.0f %10.0f %10.0f\n" "$t" "$(m "$t" rps)" "$(m "$t" p50)" "$(m "$t" p99)"; done
awk -v g="$(m contextgate rps)" -v n="$(m nginx rps)" 'BEGIN { printf "contextgate/nginx throughput ratio: %.2f\n", g / n }'
[ -z "${B:-}" ] || awk -v g="$(m before rps)" -v n="$(m nginx rps)" 'BEGIN { printf "before/nginx throughput ratio: %.2f\n", g / n }'

echo
echo "## Latency added over direct at a fixed ${RATE} req/s: hey -c 10 -q $((RATE / 10)) (median of $ROUNDS)"
printf "%-12s %10s %10s %12s %12s\n" target "p50 us" "p99 us" "added p50" "added p99"
for t in "${targets[@]}"; do
  printf "%-12s %10.0f %10.0f %12.0f %12.0f\n" "$t" "$(m "$t" fixed50)" "$(m "$t" fixed99)" \
    "$(awk -v a="$(m "$t" fixed50)" -v b="$(m direct fixed50)" 'BEGIN { print a - b }')" \
    "$(awk -v a="$(m "$t" fixed99)" -v b="$(m direct fixed99)" 'BEGIN { print a - b }')"
done

echo
echo "## $STREAMS concurrent SSE streams, an event every ${EVENT_DELAY_MS} ms (median of $ROUNDS)"
printf "%-12s %10s %10s %12s %12s %14s %14s\n" target "ttfb p50" "ttfb p99" "added p50" "added p99" "event p50 +" "event p99 +"
for t in "${targets[@]}"; do
  printf "%-12s %10.0f %10.0f %12.0f %12.0f %14.0f %14.0f\n" "$t" "$(m "$t" ttfb50)" "$(m "$t" ttfb99)" \
    "$(awk -v a="$(m "$t" ttfb50)" -v b="$(m direct ttfb50)" 'BEGIN { print a - b }')" \
    "$(awk -v a="$(m "$t" ttfb99)" -v b="$(m direct ttfb99)" 'BEGIN { print a - b }')" \
    "$(awk -v a="$(m "$t" ev50)" -v b="$(m direct ev50)" 'BEGIN { print a - b }')" \
    "$(awk -v a="$(m "$t" ev99)" -v b="$(m direct ev99)" 'BEGIN { print a - b }')"
done
echo "(all in microseconds; 'event +' is the arrival time of events, streams pooled, minus direct's)"

rss() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$contextgate_pid/status"; }
echo
echo "## contextgate memory: peak RSS $(( $(rss VmHWM) / 1024 )) MiB, now $(( $(rss VmRSS) / 1024 )) MiB"

if [ "$SOAK" -gt 0 ]; then
  echo
  echo "## Soak: ${SOAK}s of wrk -c$CONNS through contextgate, RSS every 30 s (MiB)"
  wrk -t1 -c"$CONNS" -d"${SOAK}s" -s "$tmp/post.lua" "http://127.0.0.1:$contextgate_port/v1/chat/completions" >"$tmp/soak.out" &
  soak=$!
  samples=""
  while kill -0 "$soak" 2>/dev/null; do samples+="$(( $(rss VmRSS) / 1024 )) "; sleep 30; done
  echo "$samples"
  awk '/Requests\/sec/ { print "soak throughput: " $2 " req/s" }' "$tmp/soak.out"
fi
