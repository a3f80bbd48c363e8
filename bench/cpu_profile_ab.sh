#!/usr/bin/env bash
# Where two gateway builds spend their CPU under the same load, sampled rather than counted:
# callgrind (instructions_per_request.sh) counts instructions, which do not see cache misses,
# stalls or the kernel, and bench/cpu_per_request.sh gives one number per process. Here both
# builds (1 worker each) take RATE req/s at the same time for DURATION, and `perf record -e
# cpu-clock` (a software clock: no hardware counters needed, as on this VM) samples each for the
# middle RECORD seconds. Over ROUNDS rounds it prints the samples of each side by where they
# fell: the kernel, the gateway's own code, the C library; then the gateway's functions whose
# samples differ most between A and B (names shortened: no arguments or template arguments).
#
# A sample is the clock's tick (1/FREQ s of CPU) landing on an instruction, so a function's count
# is its share of CPU time, stalls included; an instruction after a slow one often takes the
# tick, so read functions, not instructions. Counts below some tens are noise.
#
#   B=/work/base-a4c/build/contextgate bench/cpu_profile_ab.sh
#   A=/tmp/new/contextgate B=/tmp/old/contextgate ROUNDS=5 TOP=40 bench/cpu_profile_ab.sh
set -euo pipefail
RATE="${RATE:-2000}"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-12s}"
RECORD="${RECORD:-8}"
FREQ="${FREQ:-4000}"
TOP="${TOP:-30}"
A="${A:-build/contextgate}"
B="${B:?B=/path/to/the other contextgate binary}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build contextgate contextgate-fake-upstream
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-perf)" >&2; exit 1; }
start_fake
start_a_and_b 1

# The samples of PID for RECORD seconds into FILE (perf's own output to FILE.log).
sample() {
  perf record -q -e cpu-clock -F "$FREQ" -p "$1" -o "$2" -- sleep "$RECORD" >"$2.log" 2>&1
}

# Warmed up together, as each round runs.
drive_load "$a_port" "$tmp/warm_a" &
warm_a=$!
drive_load "$b_port" "$tmp/warm_b" &
warm_b=$!
wait "$warm_a" "$warm_b"
for round in $(seq "$ROUNDS"); do
  drive_load "$a_port" "$tmp/load_a" &
  load_a=$!
  drive_load "$b_port" "$tmp/load_b" &
  load_b=$!
  sleep 1
  sample "$a_pid" "$tmp/a.$round.data" &
  sample_a=$!
  sample "$b_pid" "$tmp/b.$round.data" &
  sample_b=$!
  wait "$sample_a" "$sample_b" "$load_a" "$load_b"
  for side in a b; do
    perf report -i "$tmp/$side.$round.data" --no-children -g none --sort dso,sym --stdio -n \
      2>/dev/null | grep '%' >>"$tmp/$side.samples"
  done
done

echo "# CPU samples (perf cpu-clock, ${FREQ} Hz, ${RECORD} s a round, ${ROUNDS} rounds) at ${RATE} req/s each, together: A = $A, B = $B"
python3 - "$tmp/a.samples" "$tmp/b.samples" "$(basename "$A")" "$(basename "$B")" "$TOP" <<'PY'
import collections, re, sys

def short(name):
    name = name.replace("(anonymous namespace)", "anon").replace("operator()", "operator_call")
    name = re.sub(r"\[abi:cxx11\]| \[clone [^]]*\]", "", name)
    name = name.split("(")[0]
    while True:
        stripped = re.sub(r"<[^<>]*>", "", name)
        if stripped == name:
            return name
        name = stripped

def load(path, binary):
    places, functions, others = collections.Counter(), collections.Counter(), collections.Counter()
    for line in open(path):
        # "  12.34%   567  dso  [.] symbol"
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[[.k]\]\s+(.*)", line)
        if not m:
            continue
        n, dso, sym = int(m.group(1)), m.group(2), m.group(3).strip()
        place = "the gateway" if dso == binary else "kernel" if dso == "[kernel.kallsyms]" \
            else "libc" if dso.startswith("libc.") else "other libraries"
        places[place] += n
        if place == "the gateway":
            functions[short(sym)] += n
        elif place == "other libraries":
            others[dso + " " + short(sym)] += n
    return places, functions, others

a_places, a_functions, a_others = load(sys.argv[1], sys.argv[3])
b_places, b_functions, b_others = load(sys.argv[2], sys.argv[4])
ratio = lambda a, b: f"{a / b:.3f}" if b else "-"
print(f"{'where':<18}{'A':>8}{'B':>8}{'A/B':>8}")
for place in ["kernel", "the gateway", "libc", "other libraries"]:
    print(f"{place:<18}{a_places[place]:>8}{b_places[place]:>8}{ratio(a_places[place], b_places[place]):>8}")
total_a, total_b = sum(a_places.values()), sum(b_places.values())
print(f"{'all':<18}{total_a:>8}{total_b:>8}{ratio(total_a, total_b):>8}")
print(f"\n# the gateway's functions, the {sys.argv[5]} largest differences (A - B)")
names = set(a_functions) | set(b_functions)
for name in sorted(names, key=lambda n: -abs(a_functions[n] - b_functions[n]))[: int(sys.argv[5])]:
    a, b = a_functions[name], b_functions[name]
    print(f"{a:>6}{b:>6}{a - b:>+7}  {name[:110]}")
print("\n# the other libraries' functions, the 10 largest differences (A - B)")
names = set(a_others) | set(b_others)
for name in sorted(names, key=lambda n: -abs(a_others[n] - b_others[n]))[:10]:
    a, b = a_others[name], b_others[name]
    print(f"{a:>6}{b:>6}{a - b:>+7}  {name[:110]}")
PY
