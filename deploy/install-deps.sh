#!/usr/bin/env bash
# Installs everything contextgate needs to build, test and benchmark on Debian 12.
# Idempotent: packages already present are skipped by apt; npm packages come from the lockfile.
#   deploy/install-deps.sh           everything
#   deploy/install-deps.sh --build   only what the release build needs (deploy/build-release.sh:
#                                    the compilers and libraries, npm for the console, and hey
#                                    for the profile-guided build's training run)
set -euo pipefail

build_only=false
[ "${1:-}" = --build ] && build_only=true

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates openssl
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev libboost-test1.81-dev
  libboost-system1.81-dev
  libssl-dev libyaml-cpp-dev libsqlite3-dev libre2-dev libvalijson-dev libgit2-dev
  libhiredis-dev libhyperscan-dev libpq-dev
  hey
)
$build_only || packages+=(
  curl jq   # the docs' walkthroughs, which tests/docs runs
  redis-server python3-prometheus-client postgresql
  universal-ctags clang-format
  nginx-light wrk valgrind
  chromium
)
# Node may come from a vendor package that bundles npm; Debian's npm would conflict with it.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

$build_only && exit 0

# The e2e tests drive the gateway with the official openai and @anthropic-ai/sdk npm clients and
# the console with playwright-core (Debian's chromium above), pinned by the lockfile. The
# console's own packages (web/package-lock.json) are installed by the build.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
e2e="$here/tests/e2e"
if [ -f "$e2e/package-lock.json" ] && { [ ! -f "$e2e/node_modules/.package-lock.json" ] ||
     [ "$e2e/package-lock.json" -nt "$e2e/node_modules/.package-lock.json" ]; }; then
  (cd "$e2e" && npm ci --no-audit --no-fund --loglevel=error)
fi
# The real coding agents (Claude Code, Codex, Qwen Code) for tests/agents, pinned by its
# lockfile; their platform binaries come inside the packages, so no install script runs. `npm
# install` (which keeps the lockfile's versions): npm ci refuses this lockfile for optional
# platform packages of a dependency that the registry does not publish.
agents="$here/tests/agents"
if [ -f "$agents/package-lock.json" ] && { [ ! -f "$agents/node_modules/.package-lock.json" ] ||
     [ "$agents/package-lock.json" -nt "$agents/node_modules/.package-lock.json" ]; }; then
  (cd "$agents" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
