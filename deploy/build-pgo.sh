#!/usr/bin/env bash
# Builds contextgate with profile-guided optimisation into build-pgo/contextgate: an instrumented
# build serves a training load through the passthrough (the canned fake upstream; requests at a
# fixed rate, at saturation and as SSE streams), writes its profile when it exits, and the same
# build directory is built again with that profile. About twice a normal build's time.
# Measured in docs/benchmarks.md (2026-11-24, third sitting): 6–8 % less CPU per proxied request.
#
#   deploy/build-pgo.sh                 # then: build-pgo/contextgate serve --config …
#   BUILD_DIR=/tmp/pgo deploy/build-pgo.sh
# shellcheck disable=SC2154  # training_pid and training_port are set by start_gateway
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
dir="${BUILD_DIR:-build-pgo}"
jobs="${JOBS:-2}"
deploy/install-deps.sh --build >/dev/null

# The fake upstream, the gateway's start and the clean-up on exit are the benchmarks' (it cd's to
# the repository's root).
source bench/lib.sh

echo "build-pgo: instrumented build in $dir"
rm -rf "$dir/pgo-profile"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCONTEXTGATE_PGO=generate >/dev/null
cmake --build "$dir" -j "$jobs" --target contextgate contextgate-fake-upstream sse_load >/dev/null

echo "build-pgo: training"
start_fake "$dir"
start_gateway training "$dir/contextgate" 1
url="http://127.0.0.1:$training_port/v1/chat/completions"
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
hey -z 10s -c 10 -q 200 -m POST -T application/json -d "$body" "$url" >"$tmp/fixed.out"
hey -z 5s -c 50 -m POST -T application/json -d "$body" "$url" >"$tmp/saturated.out"
"$dir/sse_load" "$training_port" 100 20 >/dev/null
for out in fixed saturated; do
  grep -q '\[200\]' "$tmp/$out.out" || { echo "build-pgo: no answer in training" >&2; exit 1; }
done
# The profile is written when the process exits: a graceful stop, waited for.
kill -TERM "$training_pid"
wait "$training_pid" || { echo "build-pgo: the instrumented gateway did not exit cleanly" >&2; exit 1; }
[ -n "$(find "$dir/pgo-profile" -name '*.gcda' -print -quit)" ] ||
  { echo "build-pgo: no profile written to $dir/pgo-profile" >&2; exit 1; }

echo "build-pgo: optimised build"
cmake -S . -B "$dir" -DCONTEXTGATE_PGO=use >/dev/null
cmake --build "$dir" -j "$jobs" --target contextgate >/dev/null
echo "build-pgo: $dir/contextgate"
