#!/usr/bin/env bash
# Installs what is missing, builds everything and runs every test: unit, integration and e2e
# (the official openai and @anthropic-ai/sdk npm clients, a throwaway PostgreSQL) on a Release build,
# then unit and integration (SQLite and PostgreSQL) again under
# AddressSanitizer + UndefinedBehaviorSanitizer, with the fuzz smoke runs (reply parser, request
# head, provider adapters).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${JOBS:-2}"
deploy/install-deps.sh

echo "== Source layout (clang-format, .clang-format)"
git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror

echo "== Release build and tests"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build -j "$jobs" --output-on-failure --timeout 300

echo "== ASan + UBSan build and tests"
# Line tables only (-g1): a sanitizer's report still names file and line in every frame, and the
# build takes a fifth less time than with full debug information.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
  -DCONTEXTGATE_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs" --target unit_tests integration_tests tool_call_parser_fuzz \
  request_head_fuzz providers_fuzz
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -j "$jobs" --output-on-failure --timeout 300 -R '^(unit|integration|integration_postgres|store_contract_postgres|fuzz_smoke_.*)$'
