#!/usr/bin/env bash
# The guardrails' scan per 10 KB of prose, code and near misses, and the check of a ~10 KB
# request body with `detect: [secrets, pii]` (bench/guardrails_scan.cpp); medians of ROUNDS.
#   ROUNDS=15 bench/guardrails_scan.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

ROUNDS="${ROUNDS:-15}"
bench_build guardrails_scan
echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
build/guardrails_scan "$ROUNDS"
