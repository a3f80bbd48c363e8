#!/usr/bin/env bash
# Translation benchmark: what each translated direction costs over the plain passthrough —
# Claude and Gemini behind /v1/chat/completions, an OpenAI-compatible model behind Anthropic's
# /v1/messages (Claude Code's API), behind /v1/responses (Codex's, `responses: translate`) and
# behind Gemini's streamGenerateContent (Gemini CLI's), each beside the same API passed through
# natively; and Amazon Bedrock: a Chat Completions client on Converse (beside the passthrough) and
# a /v1/messages client on Claude's InvokeModel (beside messages-native), each request signed
# with SigV4 and its stream read from AWS's event-stream frames. One contextgate with its
# upstreams on the same canned fake (OpenAI, Anthropic Messages, Gemini generateContent, Bedrock,
# which verifies each signature), measured side by side in interleaved rounds with the fake
# directly and nginx in front of it as references (the machine is shared and noisy: medians and
# ratios count).
#
#   bench/translation.sh                 # defaults below; results go to stdout
#   ROUNDS=5 DURATION=15s bench/translation.sh
#
# Measures, per target: latency at a fixed moderate rate (hey -q), the gateway's CPU per request
# over that run (from /proc: the translation cost), and over STREAMS concurrent streams the time
# to first byte and to the first chunk with text (time to first token). The fake's answers differ
# a little by dialect (Anthropic's stream has more events), so "translated" includes that.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10s}"
RATE="${RATE:-1000}"
STREAMS="${STREAMS:-100}"
EVENT_DELAY_MS="${EVENT_DELAY_MS:-0}"   # 0: the fake writes its events at once; the gateway's own delay shows

bench_build contextgate contextgate-fake-upstream sse_load
ulimit -n "$(ulimit -Hn)"
start_fake
start_nginx 1
cat >"$tmp/gateway.yaml" <<YAML
server:
  listen: 127.0.0.1:0
  workers: 1
upstreams:
  - name: openai
    base_url: http://127.0.0.1:$fake_port/v1
    models: ["gpt-*"]
    max_idle_connections: 4096
  - name: claude
    provider: anthropic
    base_url: http://127.0.0.1:$fake_port
    api_key: sk-bench
    auth: replace
    models: ["claude-*"]
    max_idle_connections: 4096
  - name: gemini
    provider: gemini
    base_url: http://127.0.0.1:$fake_port/v1beta
    api_key: g-bench
    auth: replace
    models: ["gemini-*"]
    max_idle_connections: 4096
  - name: translating
    base_url: http://127.0.0.1:$fake_port/v1
    models: ["rt-*"]
    responses: translate
    max_idle_connections: 4096
  - name: bedrock
    provider: bedrock
    region: us-east-1
    base_url: http://127.0.0.1:$fake_port
    aws:   # the keys the fake Bedrock knows (tests/support/fake_providers.hpp)
      access_key_id: AKIAFAKEBEDROCK00001
      secret_access_key: fakeBedrockSecretKey/0123456789abcdefghij
    models: ["meta.*", "anthropic.*"]
    max_idle_connections: 4096
logging:
  access_log: false
YAML
build/contextgate serve --config "$tmp/gateway.yaml" 2>"$tmp/gateway.err" &
pids+=($!)
gateway_pid=$!
gateway_port="$(wait_for "$tmp/gateway.err" 'listening on http://127.0.0.1:([0-9]+)')"

targets=(direct nginx passthrough claude gemini messages-native messages responses-native responses
         generate-native generate converse invoke)
declare -A port=([direct]=$fake_port [nginx]=$nginx_port [passthrough]=$gateway_port
                 [claude]=$gateway_port [gemini]=$gateway_port
                 [messages-native]=$gateway_port [messages]=$gateway_port
                 [responses-native]=$gateway_port [responses]=$gateway_port
                 [generate-native]=$gateway_port [generate]=$gateway_port
                 [converse]=$gateway_port [invoke]=$gateway_port)
declare -A model=([direct]=gpt-4o-mini [nginx]=gpt-4o-mini [passthrough]=gpt-4o-mini
                  [claude]=claude-bench [gemini]=gemini-bench
                  [messages-native]=claude-bench [messages]=gpt-4o-mini
                  [responses-native]=gpt-4o-mini [responses]=rt-bench
                  [generate-native]=gemini-bench [generate]=gpt-4o-mini
                  [converse]=meta.llama-bench-v1:0 [invoke]=anthropic.claude-bench-v1:0)
# The client API each target is asked in: Chat Completions, Messages or Responses.
declare -A api=([direct]=chat [nginx]=chat [passthrough]=chat [claude]=chat [gemini]=chat
                [messages-native]=messages [messages]=messages
                [responses-native]=responses [responses]=responses
                [generate-native]=gemini [generate]=gemini
                [converse]=chat [invoke]=messages)
request_of() {  # path and body of a whole request in target $1's API
  case ${api[$1]} in
    messages) echo "/v1/messages {\"model\":\"${model[$1]}\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";;
    responses) echo "/v1/responses {\"model\":\"${model[$1]}\",\"input\":\"Say hello\"}";;
    gemini) echo "/v1beta/models/${model[$1]}:generateContent {\"contents\":[{\"parts\":[{\"text\":\"Say hello\"}]}]}";;
    *) echo "/v1/chat/completions {\"model\":\"${model[$1]}\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";;
  esac
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

echo "# contextgate translation benchmark  $(date -u +%FT%TZ)  $(nproc) cores, 1 worker"
echo "# rounds=$ROUNDS duration=$DURATION rate=${RATE}/s streams=$STREAMS event_delay=${EVENT_DELAY_MS}ms"
for round in $(seq "$ROUNDS"); do
  for t in "${targets[@]}"; do
    read -r path body < <(request_of "$t")
    url="http://127.0.0.1:${port[$t]}$path"
    before="$(cpu_ticks "$gateway_pid")"
    out="$(hey -z "$DURATION" -c 10 -q $((RATE / 10)) -m POST -T application/json \
      -H "anthropic-version: 2023-06-01" -d "$body" "$url")"
    after="$(cpu_ticks "$gateway_pid")"
    ok="$(echo "$out" | awk '/\[200\]/ { print $2 }')"
    [ -n "$ok" ] || { echo "$t: no 200 answers" >&2; echo "$out" >&2; exit 1; }
    echo "$out" | awk '/ 50% in/ { print $3 * 1000000 }' >>"$tmp/$t.p50"
    echo "$out" | awk '/ 99% in/ { print $3 * 1000000 }' >>"$tmp/$t.p99"
    awk -v t=$((after - before)) -v n="$ok" -v hz="$(getconf CLK_TCK)" \
      'BEGIN { printf "%.1f\n", t * 1000000 / hz / n }' >>"$tmp/$t.cpu"
    read -r t50 t99 _ _ streamed k50 k99 < <(build/sse_load "${port[$t]}" "$STREAMS" "$EVENT_DELAY_MS" "${model[$t]}" "${api[$t]}")
    [ "$streamed" = "$STREAMS" ] || { echo "$t: only $streamed of $STREAMS streams completed" >&2; exit 1; }
    echo "$t50" >>"$tmp/$t.ttfb50"; echo "$t99" >>"$tmp/$t.ttfb99"
    echo "$k50" >>"$tmp/$t.tok50"; echo "$k99" >>"$tmp/$t.tok99"
  done
done

m() { median <"$tmp/$1.$2"; }
echo
echo "## At a fixed ${RATE} req/s (hey -c 10 -q $((RATE / 10))), median of $ROUNDS; gateway CPU per request"
printf "%-17s %10s %10s %12s %14s\n" target "p50 us" "p99 us" "added p50" "gateway us/req"
for t in "${targets[@]}"; do
  cpu="-"
  case $t in direct|nginx) ;; *) cpu="$(m "$t" cpu)";; esac
  printf "%-17s %10.0f %10.0f %12.0f %14s\n" "$t" "$(m "$t" p50)" "$(m "$t" p99)" \
    "$(awk -v a="$(m "$t" p50)" -v b="$(m direct p50)" 'BEGIN { print a - b }')" "$cpu"
done
for pair in claude:passthrough gemini:passthrough messages:messages-native responses:responses-native generate:generate-native \
            converse:passthrough invoke:messages-native; do
  t=${pair%%:*} base=${pair#*:}
  awk -v a="$(m "$t" cpu)" -v b="$(m "$base" cpu)" -v n="$t" -v r="$base" \
    'BEGIN { printf "%s: translation costs %.1f us of CPU per request over %s (%.2fx)\n", n, a - b, r, a / b }'
done

echo
echo "## $STREAMS concurrent streams, an event every ${EVENT_DELAY_MS} ms (median of $ROUNDS, microseconds)"
printf "%-17s %10s %10s %12s %12s %16s\n" target "ttfb p50" "ttfb p99" "token p50" "token p99" "added token p50"
for t in "${targets[@]}"; do
  printf "%-17s %10.0f %10.0f %12.0f %12.0f %16.0f\n" "$t" "$(m "$t" ttfb50)" "$(m "$t" ttfb99)" \
    "$(m "$t" tok50)" "$(m "$t" tok99)" \
    "$(awk -v a="$(m "$t" tok50)" -v b="$(m direct tok50)" 'BEGIN { print a - b }')"
done
for pair in messages:messages-native responses:responses-native generate:generate-native \
            converse:passthrough invoke:messages-native; do
  t=${pair%%:*} base=${pair#*:}
  awk -v a="$(m "$t" tok50)" -v b="$(m "$base" tok50)" -v c="$(m "$t" tok99)" -v d="$(m "$base" tok99)" -v n="$t" -v r="$base" \
    'BEGIN { printf "%s: first text event %+.0f us at p50, %+.0f us at p99 against %s\n", n, a - b, c - d, r }'
done
echo "(token: the first event with text; direct, nginx and passthrough get the OpenAI fake's stream;"
echo " messages-native the Anthropic fake's, responses-native the fake's own Responses stream,"
echo " generate-native the Gemini fake's; converse and invoke Bedrock's event stream, signed)"
