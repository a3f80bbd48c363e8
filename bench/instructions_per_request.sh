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
  local name=$1 port_var="${1}_port"
  start_under_callgrind "$name" "$2" "${3:-}"
  chat_requests "${!port_var}" 2000
  stop_under_callgrind "$name"
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
