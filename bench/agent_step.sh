#!/usr/bin/env bash
# The agent loop's own time per step (bench/agent_step.cpp): the gateway and the scripted fake
# model in one process, a run of STEPS read_file calls on a CONVERSATION_KB conversation, against
# the same number of model round trips sent straight to the fake. Prints medians and the ratio.
#   STEPS=20 ROUNDS=7 CONVERSATION_KB=50 bench/agent_step.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
bench_build agent_step
"$bench_root/build/agent_step" "${STEPS:-20}" "${ROUNDS:-7}" "${CONVERSATION_KB:-50}"
