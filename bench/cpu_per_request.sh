#!/usr/bin/env bash
# CPU time per proxied request at a fixed, moderate rate: contextgate against nginx (1 worker
# each), or against another contextgate binary for an A/B of a change. Throughput under
# saturation is noisy on a shared 2-core machine; CPU time per request at a fixed rate
# (utime+stime of the proxy process over the run, from /proc) is a steadier yardstick.
#
#   bench/cpu_per_request.sh                       # build/contextgate vs nginx
#   B=/path/to/old/contextgate bench/cpu_per_request.sh   # build/contextgate vs another build
#   RATE=2000 ROUNDS=5 bench/cpu_per_request.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
RATE="${RATE:-2000}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-5s}"
B="${B:-nginx}"

deploy/install-deps.sh >/dev/null
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target contextgate contextgate-fake-upstream >/dev/null

tmp="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

wait_for() {  # file pattern -> first capture group
  for _ in $(seq 100); do
    if grep -qE "$2" "$1" 2>/dev/null; then sed -nE "s|.*$2.*|\1|p" "$1" | head -1; return; fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1" >&2; exit 1
}

build/tests/contextgate-fake-upstream --port 0 >"$tmp/fake.out" 2>&1 &
pids+=($!)
fake_port="$(wait_for "$tmp/fake.out" 'listening on ([0-9]+)')"

start_gateway() {  # binary name -> "pid port"
  cat >"$tmp/$2.yaml" <<EOF
server:
  listen: 127.0.0.1:0
  workers: 1
upstreams:
  - name: fake
    base_url: http://127.0.0.1:$fake_port/v1
logging:
  access_log: false
EOF
  "$1" serve --config "$tmp/$2.yaml" 2>"$tmp/$2.err" &
  pids+=($!)
  echo "$! $(wait_for "$tmp/$2.err" 'listening on http://127.0.0.1:([0-9]+)')"
}

read -r a_pid a_port < <(start_gateway build/contextgate a)
if [ "$B" = nginx ]; then
  b_port=18655
  mkdir -p "$tmp/nginx"
  cat >"$tmp/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  upstream fake { server 127.0.0.1:$fake_port; keepalive 1024; }
  server {
    listen 127.0.0.1:$b_port;
    location / { proxy_pass http://fake; proxy_http_version 1.1; proxy_set_header Connection "";
                 proxy_buffering off; proxy_request_buffering off; }
  }
}
EOF
  nginx -c "$tmp/nginx.conf" -p "$tmp/nginx" &
  pids+=($!)
  for _ in $(seq 50); do pgrep -f "nginx: worker process" >/dev/null && break; sleep 0.1; done
  b_pid="$(pgrep -f "nginx: worker process" | head -1)"
else
  read -r b_pid b_port < <(start_gateway "$B" b)
fi

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
echo "# CPU per request at ${RATE} req/s, ${DURATION} per run: A = build/contextgate, B = $B"
for round in $(seq "$ROUNDS"); do
  line="round $round:"
  for side in a b; do
    pid_var="${side}_pid"; port_var="${side}_port"
    before="$(cpu_ticks "${!pid_var}")"
    out="$(hey -z "$DURATION" -c 10 -q $((RATE / 10)) -m POST -T application/json -d "$body" \
      "http://127.0.0.1:${!port_var}/v1/chat/completions")"
    after="$(cpu_ticks "${!pid_var}")"
    ok="$(echo "$out" | awk '/\[200\]/ { print $2 }')"
    line+="  $(echo "$side" | tr a-b A-B) $(awk -v t=$((after - before)) -v n="$ok" -v hz="$(getconf CLK_TCK)" \
      'BEGIN { printf "%.1f us/request", t * 1000000 / hz / n }')"
  done
  echo "$line"
done
