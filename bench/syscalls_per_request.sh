#!/usr/bin/env bash
# System calls per proxied request at a fixed, moderate rate: contextgate against nginx (1 worker
# each), or against another contextgate build. Counted by the kernel's tracepoints through
# `perf stat` (needs root or kernel.perf_event_paranoid <= -1), so nothing slows the proxy down
# the way strace does: every call, the recvfrom() calls that failed with EAGAIN (a read tried
# before any byte arrived) and the epoll_wait() calls.
#
#   bench/syscalls_per_request.sh
#   A=/path/to/new B=/path/to/old bench/syscalls_per_request.sh
set -euo pipefail
RATE="${RATE:-2000}"
ROUNDS="${ROUNDS:-3}"
A="${A:-build/contextgate}"
B="${B:-nginx}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v perf >/dev/null || { echo "needs perf (linux-perf)" >&2; exit 1; }

bench_build contextgate contextgate-fake-upstream
start_fake
start_a_and_b 1

# counts PID PORT: drives $RATE req/s for 4 s and counts over the middle 2 s.
counts() {
  local pid=$1 port=$2 out
  local body='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}'
  hey -z 4s -c 10 -q $((RATE / 10)) -m POST -T application/json -d "$body" \
    "http://127.0.0.1:$port/v1/chat/completions" >/dev/null &
  local load=$!
  sleep 1
  out="$(perf stat -x, -e raw_syscalls:sys_enter \
    -e syscalls:sys_exit_recvfrom --filter 'ret == -11' \
    -e syscalls:sys_enter_epoll_wait -p "$pid" -- sleep 2 2>&1)"
  wait "$load"
  echo "$out" | awk -F, -v n=$((RATE * 2)) '
    /raw_syscalls:sys_enter/ { all = $1 / n }
    /sys_exit_recvfrom/ { again = $1 / n }
    /sys_enter_epoll_wait/ { ep = $1 / n }
    END { printf "%5.2f calls (%4.2f recvfrom EAGAIN, %4.2f epoll_wait)", all, again, ep }'
}

echo "# system calls per request at ${RATE} req/s: A = $A, B = $B"
for round in $(seq "$ROUNDS"); do
  echo "round $round:  A $(counts "$a_pid" "$a_port")   B $(counts "$b_pid" "$b_port")"
done
