#!/usr/bin/env bash
# Tool performance against ripgrep, side by side on a generated tree (bench/make_tree.py) and on
# a real one, the system's C/C++ headers with Boost (HEADERS, /usr/include by default):
#   search_files vs `rg` (same pattern, same case rule; literal, alternation, class and
#   case-insensitive patterns), find_files vs `rg --files -g`, and find_definition latency once
#   the index exists (in-process, bench/tools_bench.cpp).
# Both sides run as fresh processes on a warm page cache, interleaved round by round; the script
# prints medians and ratios (contextgate / rg: below 1.0 is faster than rg).
#   FILES=50000 ROUNDS=7 bench/tools.sh
#   B=/path/to/other/contextgate ...   adds that build's search as a third column (before/after)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

FILES="${FILES:-50000}"
ROUNDS="${ROUNDS:-7}"
HEADERS="${HEADERS:-/usr/include}"
command -v rg >/dev/null || apt-get install -y ripgrep >/dev/null
command -v python3 >/dev/null || apt-get install -y python3 >/dev/null
bench_build contextgate tools_bench
cg="$bench_root/build/contextgate"
# rg honours .gitignore only inside a git repository unless told otherwise; contextgate always does.
rg="rg --no-require-git"
tree="$tmp/tree"
python3 bench/make_tree.py "$tree" "$FILES"
echo "tree: $(find "$tree" -type f | wc -l) files, $(du -sh "$tree" | cut -f1); rg $(rg --version | head -1 | cut -d' ' -f2); $(nproc) cores"

ms() {  # wall milliseconds of one run of "$@", output discarded
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s%N)
  echo $(((end - start) / 1000000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# compare LABEL "OURS" "THEIRS": interleaved rounds after one warm-up each. With B set, the same
# command run with that contextgate binary is timed in the same rounds (a third column).
compare() {
  local label="$1" ours="$2" theirs="$3" other="" a=() b=() c=()
  [ -n "${B:-}" ] && other="${ours//$cg/$B}"
  eval "$ours" >/dev/null 2>&1 || true
  eval "$theirs" >/dev/null 2>&1 || true
  for _ in $(seq "$ROUNDS"); do
    a+=("$(ms bash -c "$ours")")
    b+=("$(ms bash -c "$theirs")")
    [ -z "$other" ] || c+=("$(ms bash -c "$other")")
  done
  local ma mb mc=""
  ma=$(printf '%s\n' "${a[@]}" | median)
  mb=$(printf '%s\n' "${b[@]}" | median)
  [ -z "$other" ] || mc=$(printf '%s\n' "${c[@]}" | median)
  printf '%-48s %8s ms %8s ms %7s' "$label" "$ma" "$mb" \
    "$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }')"
  [ -z "$other" ] || printf ' %8s ms %7s' "$mc" \
    "$(awk -v a="$mc" -v b="$mb" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }')"
  printf '\n'
}

# The same work on both sides: check that the match counts agree before timing.
check_count() {
  local pattern="$1" case_flag="$2" sensitive="$3" where="${4:-$tree}" ours theirs
  local json_pattern="${pattern//\\/\\\\}"
  ours=$("$cg" tool run search_files --workspace "$where" --json \
    --params "{\"pattern\":\"$json_pattern\",\"case_sensitive\":$sensitive,\"context_lines\":0}" |
    sed -nE 's/.*"total":([0-9]+).*/\1/p')
  theirs=$($rg $case_flag -c --no-filename "$pattern" "$where" | awk '{ s += $1 } END { print s + 0 }')
  [ "$ours" = "$theirs" ] || { echo "match counts differ for $pattern: $ours vs rg $theirs" >&2; exit 1; }
  echo "  $pattern: $ours matches on both sides"
}

echo "checking that both sides find the same matches:"
check_count 'needle_value_31337' '' true
check_count 'fn_(alpha|omega)_9[0-9]{2}\(' '' true
check_count 'TYPE_SIGMA_1[0-9]' '-i' false

header() {
  printf '\n%-48s %11s %11s %7s' "median of $ROUNDS runs" contextgate rg ratio
  [ -z "${B:-}" ] || printf ' %11s %7s' "B" "B/rg"
  printf '\n'
}
header
sf() { echo "$cg tool run search_files --workspace ${2:-$tree} --params '$1'"; }
compare "search_files literal (rare)" \
  "$(sf '{"pattern":"needle_value_31337","case_sensitive":true}')" \
  "$rg -n needle_value_31337 $tree"
compare "search_files regex (many matches)" \
  "$(sf '{"pattern":"fn_(alpha|omega)_9[0-9]{2}\\(","case_sensitive":true}')" \
  "$rg -n 'fn_(alpha|omega)_9[0-9]{2}\\(' $tree"
compare "search_files case-insensitive" \
  "$(sf '{"pattern":"TYPE_SIGMA_1[0-9]"}')" \
  "$rg -n -i 'TYPE_SIGMA_1[0-9]' $tree"
compare "search_files literal vs rg -j1 (one thread)" \
  "$(sf '{"pattern":"needle_value_31337","case_sensitive":true}')" \
  "$rg -j1 -n needle_value_31337 $tree"
compare "find_files **/*.py vs rg --files -g" \
  "$cg tool run find_files --workspace $tree --params '{\"pattern\":\"**/*.py\"}'" \
  "$rg --files -g '*.py' $tree"

if [ -d "$HEADERS" ]; then
  echo
  echo "system headers $HEADERS: $(find "$HEADERS" -type f | wc -l) files, $(du -sh "$HEADERS" | cut -f1)"
  echo "checking that both sides find the same matches:"
  check_count 'BOOST_BEAST_VERSION_STRING|ZZQX_never_[0-9]+' '' true "$HEADERS"
  check_count '\b[A-Z_]{3,}_MAX_SIZE\b' '' true "$HEADERS"
  check_count 'std::(unique|shared)_ptr<[A-Za-z_:]+>' '' true "$HEADERS"
  check_count 'beast_version_string' '-i' false "$HEADERS"
  check_count '[0-9]{12}' '' true "$HEADERS"
  header
  compare "headers: alternation of literals" \
    "$(sf '{"pattern":"BOOST_BEAST_VERSION_STRING|ZZQX_never_[0-9]+","case_sensitive":true}' "$HEADERS")" \
    "$rg -n 'BOOST_BEAST_VERSION_STRING|ZZQX_never_[0-9]+' $HEADERS"
  compare "headers: class \\b[A-Z_]{3,}_MAX_SIZE\\b" \
    "$(sf '{"pattern":"\\b[A-Z_]{3,}_MAX_SIZE\\b","case_sensitive":true}' "$HEADERS")" \
    "$rg -n '\b[A-Z_]{3,}_MAX_SIZE\b' $HEADERS"
  compare "headers: std::(unique|shared)_ptr<[A-Za-z_:]+>" \
    "$(sf '{"pattern":"std::(unique|shared)_ptr<[A-Za-z_:]+>","case_sensitive":true}' "$HEADERS")" \
    "$rg -n 'std::(unique|shared)_ptr<[A-Za-z_:]+>' $HEADERS"
  compare "headers: case-insensitive literal" \
    "$(sf '{"pattern":"beast_version_string"}' "$HEADERS")" \
    "$rg -n -i beast_version_string $HEADERS"
  compare "headers: no literal at all [0-9]{12}" \
    "$(sf '{"pattern":"[0-9]{12}","case_sensitive":true}' "$HEADERS")" \
    "$rg -n '[0-9]{12}' $HEADERS"
  compare "headers: alternation vs rg -j1 (one thread)" \
    "$(sf '{"pattern":"BOOST_BEAST_VERSION_STRING|ZZQX_never_[0-9]+","case_sensitive":true}' "$HEADERS")" \
    "$rg -j1 -n 'BOOST_BEAST_VERSION_STRING|ZZQX_never_[0-9]+' $HEADERS"
fi

echo
echo "find_definition (in-process, index built once; median of 21 lookups):"
build/tools_bench "$tree" fn_alpha_42
