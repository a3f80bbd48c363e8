#!/usr/bin/env bash
# The cost of routes (docs/routing.md), in one run, side by side:
#  1. CPU per request on the happy path: the same requests through a one-target route and through
#     the upstream's own model glob (today's direct match), with nginx beside them.
#  2. The time a fallback adds after a refused connection: mean latency through a route whose
#     first target refuses against the one-target route, per fallback counted in /metrics.
#  3. The same after a 503: the first target is a second fake that answers every request 503.
#     The added time includes that target's own round trip (its 503), measured alone beside it.
#
#   RATE=2000 ROUNDS=3 DURATION=5s bench/routes.sh
set -euo pipefail
RATE="${RATE:-2000}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-5s}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build contextgate contextgate-fake-upstream
start_fake
route() {  # route NAME TARGETS_YAML
  printf '%s\n' "routes:" "  - model: \"gpt-4o-mini\"" "    targets: $2" "    max_attempts: 2" \
    "health:" "  cooldown: 1ms" "  max_cooldown: 1ms"
}
extra_dead="$(printf '%s\n' "  - name: dead" "    base_url: http://127.0.0.1:1/v1")"
start_gateway direct build/contextgate 1
start_gateway routed build/contextgate 1 "$(route routed '[{upstream: fake}]')"
start_nginx 1

echo "# 1. CPU per request at ${RATE} req/s, ${DURATION} per run (1 worker each)"
for round in $(seq "$ROUNDS"); do
  d="$(cpu_us_per_request "$direct_pid" "$direct_port")"
  r="$(cpu_us_per_request "$routed_pid" "$routed_port")"
  n="$(cpu_us_per_request "$nginx_worker_pid" "$nginx_port")"
  awk -v d="$d" -v r="$r" -v n="$n" -v k="$round" 'BEGIN {
    printf "round %d: direct %s us  one-target route %s us  nginx %s us  route/direct %.3f  route/nginx %.3f\n",
      k, d, r, n, r / d, r / n }'
done

# The fallback gateway: `dead` (a refused port) listed first. Its upstream entry goes under
# `upstreams:` in the file, before the route.
name=fallback
printf '%s\n' "server:" "  listen: 127.0.0.1:0" "  workers: 1" "upstreams:" \
  "  - name: fake" "    base_url: http://127.0.0.1:$fake_port/v1" "    max_idle_connections: 4096" \
  "$extra_dead" "logging:" "  access_log: false" "context:" "  data_dir: $tmp/$name.data" \
  "$(route fallback '[{upstream: dead}, {upstream: fake}]')" >"$tmp/$name.yaml"
build/contextgate serve --config "$tmp/$name.yaml" 2>"$tmp/$name.err" &
pids+=($!)
fallback_port="$(wait_for "$tmp/$name.err" 'listening on http://127.0.0.1:([0-9]+)')"

mean_ms() {  # mean_ms PORT: mean latency of 2000 requests, one at a time
  local body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
  hey -n 2000 -c 1 -m POST -T application/json -d "$body" \
    "http://127.0.0.1:$1/v1/chat/completions" | awk '/Total:/ { printf "%.4f", $2 * 1000 / 2000 }'
}
fallbacks() {  # fallbacks PORT: the fallbacks the gateway has counted so far
  curl -s "http://127.0.0.1:$1/metrics" |
    awk '/^contextgate_route_fallbacks_total/ { n += $2 } END { print n + 0 }'
}
echo "# 2. Mean latency, 2000 sequential requests; the refused target is tried whenever its 1ms"
echo "#    cooldown has passed, so the added time is divided by the fallbacks counted"
for round in $(seq "$ROUNDS"); do
  r="$(mean_ms "$routed_port")"
  before="$(fallbacks "$fallback_port")"
  f="$(mean_ms "$fallback_port")"
  after="$(fallbacks "$fallback_port")"
  awk -v r="$r" -v f="$f" -v k="$round" -v n="$((after - before))" 'BEGIN {
    printf "round %d: one-target route %s ms  with a refused first target %s ms  fallbacks %d  added per fallback %.3f ms\n",
      k, r, f, n, (n > 0 ? (f - r) * 2000 / n : 0) }'
done

# The 503 gateway: `busy`, a fake whose script answers 503 to every request, listed first.
replies=$((ROUNDS * 2000 * 2 + 4000))
printf '[' >"$tmp/busy.json"
for _ in $(seq "$replies"); do printf '{"status":503,"content":"overloaded"},'; done >>"$tmp/busy.json"
printf '{"status":503,"content":"overloaded"}]' >>"$tmp/busy.json"
build/tests/contextgate-fake-upstream --port 0 --threads 1 --script "$tmp/busy.json" >"$tmp/busy.out" 2>&1 &
pids+=($!)
busy_port="$(wait_for "$tmp/busy.out" 'listening on ([0-9]+)')"
name=busy503
printf '%s\n' "server:" "  listen: 127.0.0.1:0" "  workers: 1" "upstreams:" \
  "  - name: fake" "    base_url: http://127.0.0.1:$fake_port/v1" "    max_idle_connections: 4096" \
  "  - name: busy" "    base_url: http://127.0.0.1:$busy_port/v1" "logging:" "  access_log: false" \
  "context:" "  data_dir: $tmp/$name.data" \
  "$(route busy503 '[{upstream: busy}, {upstream: fake}]')" >"$tmp/$name.yaml"
build/contextgate serve --config "$tmp/$name.yaml" 2>"$tmp/$name.err" &
pids+=($!)
busy503_port="$(wait_for "$tmp/$name.err" 'listening on http://127.0.0.1:([0-9]+)')"
echo "# 3. The same with a first target that answers 503 (a fake of its own); its 503 alone is"
echo "#    timed beside it, straight to it with the same client"
for round in $(seq "$ROUNDS"); do
  r="$(mean_ms "$routed_port")"
  b="$(mean_ms "$busy_port")"
  before="$(fallbacks "$busy503_port")"
  f="$(mean_ms "$busy503_port")"
  after="$(fallbacks "$busy503_port")"
  awk -v r="$r" -v b="$b" -v f="$f" -v k="$round" -v n="$((after - before))" 'BEGIN {
    added = (n > 0 ? (f - r) * 2000 / n : 0)
    printf "round %d: one-target route %s ms  the 503 alone %s ms  with a 503 first %s ms  fallbacks %d  added per fallback %.3f ms  beyond the 503 itself %.3f ms\n",
      k, r, b, f, n, added, added - b }'
done
