#!/usr/bin/env bash
# What metrics, token usage and a rate-limited virtual key cost per passthrough request: CPU time
# of the proxy process per request at a fixed rate (utime+stime from /proc, as in
# cpu_per_request.sh), 1 worker each, side by side in one run:
#   off    contextgate with metrics off and no virtual key (the cheapest configuration)
#   on     contextgate with /metrics, usage observation and every request authenticated by a
#          virtual key with rpm, tpm and max_parallel limits (memory backend)
#   traced contextgate with metrics off, no key, and every request traced (tracing.sample_ratio
#          1: a SERVER and a CLIENT span each, exported to an OTLP sink that takes them; the
#          exporter thread's CPU is counted, the sink's is not)
#   nginx  nginx as a plain keep-alive reverse proxy, the reference
#
#   bench/operations_overhead.sh
#   RATE=2000 ROUNDS=5 DURATION=5s bench/operations_overhead.sh
set -euo pipefail
RATE="${RATE:-2000}"
ROUNDS="${ROUNDS:-5}"
DURATION="${DURATION:-5s}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build contextgate contextgate-fake-upstream
start_fake
start_gateway off build/contextgate 1 "metrics:
  enabled: false"
KEY=sk-bench-0123456789abcdef
start_gateway on build/contextgate 1 "admin:
  keys:
    - name: bench
      key: $KEY
      rpm: 100000000
      tpm: 100000000000
      max_parallel: 100000"
# The OTLP/HTTP sink: takes every POST with 200 (a collector that keeps up).
python3 -c '
import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print("listening on", server.server_address[1], flush=True)
server.serve_forever()' >"$tmp/sink.out" 2>&1 &
pids+=($!)
sink_port="$(wait_for "$tmp/sink.out" 'listening on ([0-9]+)')"
start_gateway traced build/contextgate 1 "metrics:
  enabled: false
tracing:
  otlp_endpoint: http://127.0.0.1:$sink_port
  sample_ratio: 1"
start_nginx 1
nginx_pid=$nginx_worker_pid

echo "# CPU per request at ${RATE} req/s, ${DURATION} per run, 1 worker each (median of $ROUNDS rounds)"
declare -A results
for round in $(seq "$ROUNDS"); do
  line="round $round:"
  for side in off on traced nginx; do
    pid_var="${side}_pid"; port_var="${side}_port"
    us="$(cpu_us_per_request "${!pid_var}" "${!port_var}" "Authorization: Bearer $KEY")"
    results[$side]+="$us "
    line+="  $side $us us"
  done
  echo "$line"
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
off="$(echo "${results[off]}" | median)"
on="$(echo "${results[on]}" | median)"
ng="$(echo "${results[nginx]}" | median)"
tr="$(echo "${results[traced]}" | median)"
echo "median: off $off us, on $on us, traced $tr us, nginx $ng us"
awk -v off="$off" -v on="$on" -v ng="$ng" -v tr="$tr" 'BEGIN {
  printf "on/off %.3f (added %+.1f%%), off/nginx %.2f, on/nginx %.2f\n", on / off, (on / off - 1) * 100, off / ng, on / ng
  printf "traced/off %.3f (added %+.1f us), traced/nginx %.2f\n", tr / off, tr - off, tr / ng }'
