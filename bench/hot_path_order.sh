#!/usr/bin/env bash
# Writes deploy/hot-path.order: the functions of contextgate that a plain passthrough request
# runs (a Chat Completions call answered whole, and one answered as a stream, through the default
# route), one input section name a line, the most instructions first. The build compiles every
# function into a section of its own and gold places these first and side by side (CMakeLists.txt,
# CONTEXTGATE_HOT_ORDER), so that a request runs over fewer pages and cache lines of code than
# when its functions lie where their source files put them.
#
# Found by callgrind (deterministic): 1 worker in front of the fake upstream, 300 requests of
# warm-up, then 500 whole and 500 streamed requests counted; a function is listed when it ran
# about once a request of either kind (its instructions at least 0.4 a counted request). Names
# that no longer exist match nothing and cost nothing: run this again when the request path
# changes, and commit the file.
#
#   bench/hot_path_order.sh                  # from build/contextgate
#   A=/tmp/other/contextgate bench/hot_path_order.sh
set -euo pipefail
A="${A:-build/contextgate}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bench_build contextgate contextgate-fake-upstream
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
start_fake

start_under_callgrind order "$A" "" --demangle=no
streamed='{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Say hello"}]}'
chat_requests "$order_port" 500
chat_requests "$order_port" 500 "$streamed"
stop_under_callgrind order

# Callgrind's format: `fn=(id) name` names a function the first time and `fn=(id)` after
# (likewise ob=, cfn=, cob=); the cost lines under fn= are its own instructions, but the line
# after `calls=` is a call's inclusive cost, not the caller's.
awk -v requests=1000 '
  function named(line, table,   id, rest) {
    id = line; sub(/ .*/, "", id)
    rest = line; if (sub(/^[^ ]* /, "", rest)) table[id] = rest
    return table[id]
  }
  /^ob=/ { ob = named(substr($0, 4), objects); next }
  /^cob=/ { named(substr($0, 5), objects); next }
  /^fn=/ {
    fn = named(substr($0, 4), functions); sub(/\047.*/, "", fn)
    if (!(fn in object)) { object[fn] = ob; order[++n] = fn }
    next
  }
  /^cfn=/ { named(substr($0, 5), functions); next }
  /^calls=/ { skip = 1; next }
  /^[0-9+*-]/ { if (skip) { skip = 0; next } cost[fn] += $2 }
  END {
    for (i = 1; i <= n; i++) {
      f = order[i]
      if (object[f] ~ /contextgate$/ && f !~ /\.cold$/ && cost[f] >= 0.4 * requests)
        printf "%d .text.%s\n", cost[f], f
    }
  }' "$tmp/order.cg.1" | sort -k1,1nr | cut -d' ' -f2 >"$root/deploy/hot-path.order"
echo "deploy/hot-path.order: $(wc -l <"$root/deploy/hot-path.order") functions"
