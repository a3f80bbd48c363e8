#!/usr/bin/env bash
# Installs what is missing, builds contextgate (Release) and runs it with config/gateway.yaml.
# Extra arguments go to `contextgate serve`, e.g. deploy/run.sh --config my.yaml
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
deploy/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target contextgate -j "${JOBS:-2}"
config=(--config config/gateway.yaml)
for arg in "$@"; do [[ "$arg" == --config* || "$arg" == -c ]] && config=(); done
exec build/contextgate serve "${config[@]}" "$@"
