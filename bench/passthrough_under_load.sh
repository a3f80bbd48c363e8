#!/usr/bin/env bash
# Passthrough latency alone and while the Context API is busy: RUNS agent runs stepping through
# tool calls (a scripted model answering every STEP_MS) with WATCHERS event streams each. The
# store works on threads of its own and the engine on its own: the /v1 traffic on the workers
# should see no more than the CPU the agent work takes. Rounds alternate quiet and busy.
#
#   bench/passthrough_under_load.sh
#   RUNS=20 WATCHERS=50 RATE=500 DURATION=10s ROUNDS=3 STEP_MS=100 bench/passthrough_under_load.sh
#   GATEWAY=/path/to/other/contextgate bench/passthrough_under_load.sh   # e.g. an older build
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS="${RUNS:-20}"
WATCHERS="${WATCHERS:-50}"
RATE="${RATE:-500}"
DURATION="${DURATION:-10s}"
ROUNDS="${ROUNDS:-3}"
STEP_MS="${STEP_MS:-100}"
WORKERS="${WORKERS:-1}"
GATEWAY="${GATEWAY:-build/contextgate}"

bench_build contextgate contextgate-fake-upstream event_watchers
ulimit -n "$(ulimit -Hn)"
seconds="${DURATION%s}"
# Replies enough for every run of every round to step until it is cancelled (the runs start one
# after another and step through the watchers' set-up, the measurement and the status check).
steps=$(( ROUNDS * (seconds + 15) * 1000 / STEP_MS ))

# Two upstreams: the canned one for /v1 traffic, a scripted one playing the agents' model.
start_fake
canned_port=$fake_port
mkdir -p "$tmp/ws"
echo "hello" >"$tmp/ws/a.txt"
python3 - "$tmp/script.json" "$RUNS" "$steps" "$STEP_MS" <<'PY'
import json, sys
path, runs, steps, delay = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
# Each reply is the next step of some run: a small search, never twice the same (the
# identical-call guard stays off whichever run gets which reply).
call = lambda i: json.dumps({"tool": "search_files", "parameters": {"pattern": f"step{i}"},
                             "terminate": False})
json.dump([{"content": call(i), "delay_ms": delay} for i in range(runs * steps)],
          open(path, "w"))
PY
build/tests/contextgate-fake-upstream --port 0 --script "$tmp/script.json" >"$tmp/model.out" 2>&1 &
pids+=($!)
model_port="$(wait_for "$tmp/model.out" 'listening on ([0-9]+)')"
cat >"$tmp/gateway.yaml" <<YAML
server:
  listen: 127.0.0.1:0
  workers: $WORKERS
upstreams:
  - name: agents
    base_url: http://127.0.0.1:$model_port/v1
    models: ["agent"]
  - name: canned
    base_url: http://127.0.0.1:$canned_port/v1
    models: ["*"]
    max_idle_connections: 1024
logging:
  access_log: false
context:
  data_dir: $tmp/data
  workspaces: ["$tmp/ws"]
  max_steps: 1000
  max_wall_time: 1h
  max_watchers_per_run: $WATCHERS
YAML
# A build from before the watcher cap existed does not know the key.
"$GATEWAY" check-config --config "$tmp/gateway.yaml" >/dev/null 2>&1 ||
  sed -i '/max_watchers_per_run/d' "$tmp/gateway.yaml"
"$GATEWAY" serve --config "$tmp/gateway.yaml" 2>"$tmp/gateway.err" &
pids+=($!)
port="$(wait_for "$tmp/gateway.err" 'listening on http://127.0.0.1:([0-9]+)')"
url="http://127.0.0.1:$port/v1/chat/completions"
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
measure() {  # appends p50 and p99 (microseconds) of a fixed-rate run to $tmp/$1.p50/.p99
  local out
  out="$(hey -z "$DURATION" -c 10 -q $((RATE / 10)) -m POST -T application/json -d "$body" "$url")"
  echo "$out" | awk '/ 50% in/ { print $3 * 1000000 }' >>"$tmp/$1.p50"
  echo "$out" | awk '/ 99% in/ { print $3 * 1000000 }' >>"$tmp/$1.p99"
  echo "$out" | grep -qE '\[2[0-9][0-9]\]' || { echo "no 2xx answers: $out" >&2; exit 1; }
}
# field NAME: the string or number value of "NAME" in the JSON on stdin (Python would take half
# a second per call to start on a machine this busy, and the runs are stepping meanwhile).
field() { grep -oE "\"$1\": *(\"[^\"]*\"|[0-9]+)" | head -1 | sed -E 's/^[^:]*: *"?//; s/"$//'; }
start_runs() {  # starts RUNS agent runs (one chat each); their ids go to $tmp/runs
  : >"$tmp/runs"
  for _ in $(seq "$RUNS"); do
    chat=$(curl -s "http://127.0.0.1:$port/context/chats" \
      -d "{\"model\":\"agent\",\"workspace\":\"$tmp/ws\"}" | field id)
    curl -s "http://127.0.0.1:$port/context/chats/$chat/messages" -d '{"content":"list"}' |
      field run_id >>"$tmp/runs"
  done
}

echo "# passthrough under agent load  $(date -u +%FT%TZ)  $(nproc) cores, $WORKERS worker(s), $GATEWAY"
echo "# rate=${RATE}/s duration=$DURATION rounds=$ROUNDS; busy: $RUNS runs, a step every ${STEP_MS} ms each, $WATCHERS watchers each"
for round in $(seq "$ROUNDS"); do
  measure quiet
  start_runs
  build/event_watchers "$port" "$WATCHERS" $((seconds + 3)) <"$tmp/runs" >"$tmp/watchers.out" &
  watchers=$!
  sleep 2  # the watchers connect and the runs reach their stride
  measure busy
  wait "$watchers"
  read -r streams events <"$tmp/watchers.out"
  echo "$events" >>"$tmp/busy.events"
  # The load was real only if the runs were still stepping when the measurement ended.
  for run in $(cat "$tmp/runs"); do
    view=$(curl -s "http://127.0.0.1:$port/context/runs/$run")
    echo "$(field status <<<"$view") $(field step <<<"$view")"
  done >"$tmp/statuses"
  running=$(grep -c '^running' "$tmp/statuses" || true)
  awk '{ print $2 }' "$tmp/statuses" | median >>"$tmp/busy.steps"
  [ "$running" -eq "$RUNS" ] || { echo "only $running of $RUNS runs still running:" >&2; sort "$tmp/statuses" | uniq -c >&2; }
  for run in $(cat "$tmp/runs"); do curl -s -X POST "http://127.0.0.1:$port/context/runs/$run/cancel" >/dev/null; done
done

m() { median <"$tmp/$1"; }
echo
printf "%-8s %10s %10s\n" "" "p50 us" "p99 us"
printf "%-8s %10.0f %10.0f\n" quiet "$(m quiet.p50)" "$(m quiet.p99)"
printf "%-8s %10.0f %10.0f\n" busy "$(m busy.p50)" "$(m busy.p99)"
awk -v a="$(m busy.p50)" -v b="$(m quiet.p50)" -v c="$(m busy.p99)" -v d="$(m quiet.p99)" \
  'BEGIN { printf "busy/quiet: p50 %.2f, p99 %.2f\n", a / b, c / d }'
echo "events delivered to the $((RUNS * WATCHERS)) watchers per busy round (median): $(m busy.events)"
echo "steps per run at the end of a busy round (median): $(m busy.steps)"
