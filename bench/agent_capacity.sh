#!/usr/bin/env bash
# How many concurrent agent runs one gateway carries (bench/agent_capacity.cpp): for each N in
# RUNS, the real gateway with N slots running agent runs back to back (read, search, an approved
# append, a final answer; one event stream each) against a scripted model answering in MODEL_MS,
# for SECONDS, on SQLite and on PostgreSQL (a throwaway cluster on loopback, tests/support/
# postgres.sh). Each row ends with the physical limit: the same transactions written straight to
# the same database from one thread.
#   RUNS="1 10 100 500 1000" SECONDS_PER_ROW=15 MODEL_MS=3 STORES="sqlite postgres" bench/agent_capacity.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_build contextgate agent_capacity

runs="${RUNS:-1 10 100 500 1000}"
seconds="${SECONDS_PER_ROW:-15}"
model_ms="${MODEL_MS:-3}"
stores="${STORES:-sqlite postgres}"

echo "agent capacity: model answers in ${model_ms} ms (streamed), ${seconds} s per row, $(nproc) cores"
echo "                 | runs/s steps/s CPU ms | step overhead  | committed per s       | raw limit     | write q.   | RSS   | /v1 added ms| /v1 added ms| runs"
echo "store        N   |               /step  |   p50     p99  |  events    tx  ev/tx | tx/s    used  | mean peak  | MB    | idle p50 p99| load p50 p99| failed"
for store in $stores; do
  url=""
  if [ "$store" = postgres ]; then
    tests/support/postgres.sh start "$tmp/pg" >/dev/null
    trap 'tests/support/postgres.sh stop "$tmp/pg" >/dev/null 2>&1; bench_cleanup' EXIT
    url="$(cat "$tmp/pg/url")"
  fi
  for n in $runs; do
    if [ -n "$url" ]; then
      # A fresh database per row, like SQLite's fresh file.
      psql "$url" -qc 'DROP SCHEMA public CASCADE; CREATE SCHEMA public;' >/dev/null 2>&1
    fi
    build/agent_capacity build/contextgate "$n" "$seconds" "$model_ms" $url
  done
done
