# Shared set-up for the benchmark scripts (and deploy/build-pgo.sh's training run); source it.
# Starts processes in the calling shell (never in a $(...) subshell) so that every pid lands in
# `pids` and the EXIT trap stops them all, whatever happens.

bench_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$bench_root"

tmp="$(mktemp -d)"
pids=()
bench_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap bench_cleanup EXIT

# bench_build TARGET...: installs what is missing and builds the targets in Release.
bench_build() {
  deploy/install-deps.sh >/dev/null
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j2 --target "$@" >/dev/null
}

# wait_for FILE PATTERN: prints the pattern's first capture group once FILE contains it.
wait_for() {
  for _ in $(seq 100); do
    if grep -qE "$2" "$1" 2>/dev/null; then sed -nE "s|.*$2.*|\1|p" "$1" | head -1; return; fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1" >&2; cat "$1" >&2; exit 1
}

free_port() {
  local p
  for p in $(seq 18080 18999); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

# start_fake [BUILD_DIR]: the canned upstream (from build/ unless given); sets fake_port.
# PIN=1 (2 processors): the proxy under test on processor 1, the fake upstream and the load on
# processor 0, so that the proxy's caches are its own and its CPU per request varies less.
# (taskset execs the command: $! is the command's pid.)
on_proxy_cpu=()
on_load_cpu=()
if [ -n "${PIN:-}" ]; then
  on_proxy_cpu=(taskset -c 1)
  on_load_cpu=(taskset -c 0)
fi

start_fake() {
  "${on_load_cpu[@]}" "${1:-build}/tests/contextgate-fake-upstream" --port 0 --threads 1 >"$tmp/fake.out" 2>&1 &
  pids+=($!)
  fake_port="$(wait_for "$tmp/fake.out" 'listening on ([0-9]+)')"
}

# start_gateway NAME BINARY WORKERS [EXTRA_YAML]: contextgate in front of the fake, with its own
# data_dir and EXTRA_YAML appended (top-level sections); sets NAME_pid, NAME_port.
start_gateway() {
  local name=$1 binary=$2 workers=$3 extra="${4:-}"
  printf '%s\n' "server:" "  listen: 127.0.0.1:0" "  workers: $workers" "upstreams:" \
    "  - name: fake" "    base_url: http://127.0.0.1:$fake_port/v1" \
    "    max_idle_connections: 4096" "logging:" "  access_log: false" \
    "context:" "  data_dir: $tmp/$name.data" >"$tmp/$name.yaml"
  [ -z "$extra" ] || printf '%s\n' "$extra" >>"$tmp/$name.yaml"
  "${on_proxy_cpu[@]}" "$binary" serve --config "$tmp/$name.yaml" 2>"$tmp/$name.err" &
  pids+=($!)
  printf -v "${name}_pid" '%s' "$!"
  printf -v "${name}_port" '%s' "$(wait_for "$tmp/$name.err" 'listening on http://127.0.0.1:([0-9]+)')"
}

# start_under_callgrind NAME BINARY [EXTRA_YAML] [CALLGRIND_OPTION...]: start_gateway with 1 worker
# under valgrind's callgrind (its profile written to $tmp/NAME.cg), warmed up by 300 sequential
# Chat Completions requests, its counters then zeroed; sets NAME_pid, NAME_port.
start_under_callgrind() {
  local name=$1 binary=$2 extra="${3:-}"
  shift $(($# < 3 ? $# : 3))
  # Seen by start_gateway (bash's locals are dynamically scoped): the proxy runs under callgrind.
  local on_proxy_cpu=(valgrind --tool=callgrind "$@" --callgrind-out-file="$tmp/$name.cg")
  start_gateway "$name" "$binary" 1 "$extra"
  local pid_var="${name}_pid" port_var="${name}_port"
  chat_requests "${!port_var}" 300
  callgrind_control -z "${!pid_var}" >/dev/null 2>&1
}

# stop_under_callgrind NAME: dumps NAME's counters since start_under_callgrind zeroed them (the
# first numbered dump, $tmp/NAME.cg.1) and stops it.
stop_under_callgrind() {
  local pid_var="${1}_pid"
  callgrind_control -d "${!pid_var}" >/dev/null 2>&1
  kill "${!pid_var}"
  wait "${!pid_var}" 2>/dev/null || true
}

# chat_requests PORT N [BODY]: N sequential POST /v1/chat/completions through PORT (hey, one
# connection); BODY defaults to a small whole-answer request.
chat_requests() {
  local whole='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
  local body="${3:-$whole}"
  hey -n "$2" -c 1 -m POST -T application/json -d "$body" \
    "http://127.0.0.1:$1/v1/chat/completions" >/dev/null
}

# start_nginx WORKERS: nginx as a plain keep-alive reverse proxy in front of the fake, the
# reference configuration; sets nginx_port and nginx_worker_pid (its first worker process).
start_nginx() {
  nginx_port="$(free_port)"
  mkdir -p "$tmp/nginx"
  cat >"$tmp/nginx.conf" <<NGINX
daemon off;
worker_processes $1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 16384; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  upstream fake { server 127.0.0.1:$fake_port; keepalive 4096; }
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      proxy_pass http://fake;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
NGINX
  nginx -c "$tmp/nginx.conf" -p "$tmp/nginx" &
  local master=$!
  pids+=($master)
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$nginx_port") 2>/dev/null && break; sleep 0.1; done
  nginx_worker_pid="$(pgrep -P "$master" | head -1)"
}

# no_prices: the YAML of a `pricing` section whose table prices nothing (for B=unpriced).
no_prices() {
  printf '%s\n' "date: none" "models: []" >"$tmp/no-prices.yaml"
  printf '%s\n' "pricing:" "  file: $tmp/no-prices.yaml"
}

# guardrails_on: the YAML of a `guardrails` section that masks secrets and personal data in the
# request and the answer of every key (for B=guardrails).
guardrails_on() {
  printf '%s\n' "guardrails:" "  - name: bench" "    detect: [secrets, pii]" \
    "    on: [request, response]" "    action: mask"
}

# start_a_and_b [WORKERS]: contextgate $A as `a` and, as `b`: nginx when $B is "nginx"; the same
# binary $A with a price table that prices nothing when $B is "unpriced" (settlement finds no
# price: no cost is worked out, printed or added to a USD total, though the answer is still read
# whole for its `x-contextgate-cost-usd: unpriced`); the same binary with guardrails on the
# request and the answer when $B is "guardrails"; otherwise the contextgate binary $B (WORKERS
# workers each, 1 unless given); sets a_pid, a_port, b_pid, b_port.
start_a_and_b() {
  local workers="${1:-1}"
  start_gateway a "$A" "$workers"
  if [ "$B" = nginx ]; then
    start_nginx "$workers"
    b_pid=$nginx_worker_pid
    b_port=$nginx_port
  elif [ "$B" = unpriced ]; then
    start_gateway b "$A" "$workers" "$(no_prices)"
  elif [ "$B" = guardrails ]; then
    start_gateway b "$A" "$workers" "$(guardrails_on)"
  else
    start_gateway b "$B" "$workers"
  fi
}

# cpu_ns PID: the CPU time all of PID's threads have run, in nanoseconds (the scheduler's own
# count in /proc/PID/task/*/schedstat: exact, where utime + stime are 10 ms ticks).
cpu_ns() {
  cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ t += $1 } END { printf "%.0f", t }'
}

# drive_load PORT OUT [HEADER]: POST /v1/chat/completions at $RATE req/s for $DURATION through PORT
# (hey, 10 connections), hey's report into OUT.
drive_load() {
  local port=$1 out=$2 header="${3:-X-Bench: 1}"
  local body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
  "${on_load_cpu[@]}" hey -z "$DURATION" -c 10 -q $((RATE / 10)) -m POST -T application/json \
    -H "$header" -d "$body" "http://127.0.0.1:$port/v1/chat/completions" >"$out"
}

# us_per_answer NS OUT PORT: NS nanoseconds of CPU per 200 answer in hey's report OUT, in
# microseconds ("nan" when none); other statuses go to stderr (naming PORT).
us_per_answer() {
  local ok other
  ok="$(awk '/\[200\]/ { n += $2 } END { print n + 0 }' "$2")"
  other="$(awk '/^  \[[0-9]+\]/ && !/\[200\]/ { printf " %s%s", $1, $2 }' "$2")"
  [ -z "$other" ] || echo "  (port $3: non-200 answers:$other)" >&2
  awk -v t="$1" -v n="$ok" 'BEGIN { if (n == 0) print "nan"; else printf "%.2f", t / 1000 / n }'
}

# cpu_us_per_request PID PORT [HEADER]: drive_load through PORT and print the CPU time PID spent per
# 200 answer (cpu_ns), in microseconds.
cpu_us_per_request() {
  local before after
  before="$(cpu_ns "$1")"
  drive_load "$2" "$tmp/load_$2.out" "${3:-X-Bench: 1}"
  after="$(cpu_ns "$1")"
  us_per_answer $((after - before)) "$tmp/load_$2.out" "$2"
}

# cpu_us_per_request_together PID_A PORT_A PID_B PORT_B: cpu_us_per_request for both at once,
# each under its own load over the same $DURATION; sets us_a and us_b.
cpu_us_per_request_together() {
  local a0 b0 a1 b1 load_a load_b
  a0="$(cpu_ns "$1")"
  b0="$(cpu_ns "$3")"
  drive_load "$2" "$tmp/load_a.out" &
  load_a=$!
  drive_load "$4" "$tmp/load_b.out" &
  load_b=$!
  wait "$load_a" "$load_b"
  a1="$(cpu_ns "$1")"
  b1="$(cpu_ns "$3")"
  us_a="$(us_per_answer $((a1 - a0)) "$tmp/load_a.out" "$2")"
  us_b="$(us_per_answer $((b1 - b0)) "$tmp/load_b.out" "$4")"
}
