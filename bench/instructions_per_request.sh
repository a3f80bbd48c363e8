#!/usr/bin/env bash
# Instructions per proxied request, counted by valgrind's callgrind: deterministic where CPU time
# on a shared machine is not (bench/cpu_per_request.sh resolves about 1 µs, 4 % of a request).
# Each gateway runs under callgrind with 1 worker in front of the fake upstream; 300 requests warm
# it up, the counters are zeroed, 2,000 sequential requests are counted, and the count is divided.
# Prints, side by side:
#   - the model's upstream by its glob (the default route) in build/contextgate;
#   - the same through a one-target route (max_attempts 2: its JSON answer is read whole first);
#   - with B=/path/to/contextgate, the default route in that build too (an A/B of a change);
#   - with B=unpriced, the default route in build/contextgate with a price table that prices
#     nothing (settlement's price arithmetic, its text and its USD total left out; lib.sh).
#
#   bench/instructions_per_request.sh
#   B=/tmp/old/build/contextgate bench/instructions_per_request.sh
#   B=unpriced bench/instructions_per_request.sh
set -euo pipefail
A="${A:-build/contextgate}"
B="${B:-}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build contextgate contextgate-fake-upstream
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
start_fake

# counted NAME BINARY [EXTRA_YAML]: instructions per request of BINARY under callgrind.
counted() {
  local name=$1 binary=$2 extra="${3:-}"
  printf '%s\n' "server:" "  listen: 127.0.0.1:0" "  workers: 1" "upstreams:" \
    "  - name: fake" "    base_url: http://127.0.0.1:$fake_port/v1" "logging:" \
    "  access_log: false" "context:" "  data_dir: $tmp/$name.data" >"$tmp/$name.yaml"
  [ -z "$extra" ] || printf '%s\n' "$extra" >>"$tmp/$name.yaml"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/$name.cg" \
    "$binary" serve --config "$tmp/$name.yaml" 2>"$tmp/$name.err" &
  local pid=$!
  pids+=($pid)
  local port
  port="$(wait_for "$tmp/$name.err" 'listening on http://127.0.0.1:([0-9]+)')"
  local body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
  local url="http://127.0.0.1:$port/v1/chat/completions"
  hey -n 300 -c 1 -m POST -T application/json -d "$body" "$url" >/dev/null
  callgrind_control -z "$pid" >/dev/null 2>&1
  hey -n 2000 -c 1 -m POST -T application/json -d "$body" "$url" >/dev/null
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  # The dump taken after the counted requests is the first numbered one.
  callgrind_annotate "$tmp/$name.cg.1" 2>/dev/null |
    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); printf "%.0f", $1 / 2000 }'
}

route="$(printf '%s\n' "routes:" "  - model: \"gpt-4o-mini\"" "    targets: [{upstream: fake}]" \
  "    max_attempts: 2")"
direct="$(counted direct "$A")"
routed="$(counted routed "$A" "$route")"
line="default route $direct  one-target route $routed"
line+="  route/default $(awk -v r="$routed" -v d="$direct" 'BEGIN { printf "%.3f", r / d }')"
if [ "$B" = unpriced ]; then
  other="$(counted other "$A" "$(no_prices)")"
  line+="  unpriced $other  priced/unpriced $(awk -v a="$direct" -v b="$other" 'BEGIN { printf "%.3f", a / b }')"
elif [ -n "$B" ]; then
  other="$(counted other "$B")"
  line+="  B's default route $other  A/B $(awk -v a="$direct" -v b="$other" 'BEGIN { printf "%.3f", a / b }')"
fi
echo "# Instructions per request (callgrind, 2,000 sequential requests, 1 worker)"
echo "$line"
