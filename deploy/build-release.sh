#!/usr/bin/env bash
# The build that runs in production: contextgate built with profile-guided optimisation
# (deploy/build-pgo.sh: an instrumented build serves a training load through the passthrough,
# then the same tree is rebuilt with the profile it wrote) and installed under PREFIX with its
# prompts, workflows and example config. The systemd unit (deploy/contextgate.service) and the
# container image (deploy/Dockerfile) run what this installs; the README's quick start stays on
# the plain build, which takes about half the time. The measured difference is in
# docs/benchmarks.md ("The release build").
#
#   sudo deploy/build-release.sh                      # /usr/local/bin/contextgate
#   PREFIX=/opt/contextgate deploy/build-release.sh   # /opt/contextgate/bin/contextgate
#   BUILD_DIR=/tmp/release JOBS=4 deploy/build-release.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
prefix="${PREFIX:-/usr/local}"
dir="${BUILD_DIR:-build-release}"

BUILD_DIR="$dir" deploy/build-pgo.sh
cmake --install "$dir" --prefix "$prefix" >/dev/null
"$prefix/bin/contextgate" --version >/dev/null 2>&1 ||
  { echo "build-release: $prefix/bin/contextgate does not run" >&2; exit 1; }
echo "build-release: installed $prefix/bin/contextgate (profile-guided)"
