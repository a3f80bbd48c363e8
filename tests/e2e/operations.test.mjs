// Operating the gateway: /metrics read by a Prometheus text parser, JSON access logs, virtual
// keys made through /admin/keys and used by the official openai client, every limit kind with
// exact counts, the usage report, stream_usage: inject, and two gateways sharing one limit
// through a real redis-server started here on loopback.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { execFileSync } from 'node:child_process';
import { FAKE, PROMPTS, api, dir, runEvents, startAndWait, startGateway, writeConfig, until } from './support.mjs';

const UPSTREAM_KEY = 'upstream-secret-0123456789';
process.env.E2E_UPSTREAM_KEY = UPSTREAM_KEY;
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
const ESTIMATE = Math.ceil(CHAT.length / 4);  // the gateway's reservation for CHAT
const USED = 9 + 12;                          // the fake upstream's usage for a chat completion

const fake = await startAndWait(FAKE, ['--port', '0'], /listening on (\d+)/);
const FAKE_PORT = fake.match[1];
after(() => fake.child.kill('SIGKILL'));  // its open pipes would keep the file's process alive

// Limits count in UTC minute windows: a sequence that must stay in one window starts well
// before the minute ends (at most 5 s of waiting, on the clock rather than on luck).
async function awayFromMinuteEdge() {
  const into = Date.now() % 60_000;
  if (into > 50_000) await new Promise((r) => setTimeout(r, 60_000 - into + 50));
}

// A slot is freed just after the last byte of the answer went out, so the client can be a
// moment faster than the gateway: the status of the first request that is not refused within 2 s.
async function soonOk(base, key) {
  const deadline = Date.now() + 2000;
  for (;;) {
    const res = await chat(base, key);
    if (res.status !== 429 || Date.now() > deadline) return res.status;
    await new Promise((r) => setTimeout(r, 20));
  }
}

// A chat request, returning once the gateway has finished it (its access line is written after
// the key's counters were settled, which is just after the client has the whole answer).
async function settledChat(gw, key) {
  const lines = () => (gw.output().match(/ POST \/v1\/chat\/completions \d{3} /g) ?? []).length;
  const before = lines();
  const res = await chat(gw.base, key);
  await until(() => lines() > before, 2000);
  return res;
}

function chat(base, key, headers = {}, body = CHAT) {
  const h = { 'content-type': 'application/json', ...headers };
  if (key) h.authorization = `Bearer ${key}`;
  return fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: h, body });
}

async function admin(base, method, path, body, key = ADMIN_KEY) {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function newKey(base, fields) {
  const made = await admin(base, 'POST', '/admin/keys', fields);
  assert.equal(made.status, 201, JSON.stringify(made.json));
  assert.match(made.json.key, /^sk-cg-[A-Za-z0-9_-]{43}$/);
  return made.json;
}

// The scrape's samples, read by Prometheus' own Python client parser (which refuses any line
// that is not valid exposition text).
async function scrape(url) {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return JSON.parse(execFileSync('/usr/bin/python3', ['prometheus_samples.py'], { input: text }));
}

// A scrape once `ready(samples)` holds (or after 2 s): a request's duration, its pooled
// connection and a run's release are recorded just after the client has its answer.
async function scrapeWhen(url, ready) {
  const deadline = Date.now() + 2000;
  for (;;) {
    const samples = await scrape(url);
    if (ready(samples) || Date.now() > deadline) return samples;
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The value of the sample `name` whose labels include `labels` (undefined when there is none).
function sample(samples, name, labels = {}) {
  return samples.find((s) => s.name === name &&
    Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

test('metrics and JSON access logs count requests, time to first token and token usage', async () => {
  const config = writeConfig('ops-metrics.yaml', FAKE_PORT, 'logging:\n  format: json\n');
  const gw = await startGateway(config);
  const openai = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: 'client-key', maxRetries: 0 });
  await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a' }] });
  for await (const _ of await openai.chat.completions.create({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'b' }], stream: true,
    stream_options: { include_usage: true },
  }));
  for await (const _ of await openai.chat.completions.create({
    model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'c' }], stream: true,
  }));

  const passthrough2xx = { route: 'passthrough', method: 'POST', status: '2xx' };
  const m = await scrapeWhen(`${gw.base}/metrics`,
    (s) => sample(s, 'contextgate_http_request_duration_seconds_count', passthrough2xx) === 3);
  assert.equal(sample(m, 'contextgate_http_request_duration_seconds_count', passthrough2xx), 3);
  const model = { upstream: 'fake', gen_ai_provider_name: 'openai', gen_ai_request_model: 'gpt-4o-mini' };
  const input = { ...model, gen_ai_token_type: 'input' };
  // The body and the usage chunk; the third stream reported none.
  assert.equal(sample(m, 'gen_ai_client_token_usage_count', input), 2);
  assert.equal(sample(m, 'gen_ai_client_token_usage_sum', input), 18);
  assert.equal(sample(m, 'gen_ai_client_token_usage_bucket', { ...input, le: '16' }), 2);
  assert.equal(sample(m, 'gen_ai_client_token_usage_bucket', { ...input, le: '4' }), 0);
  assert.equal(sample(m, 'gen_ai_client_token_usage_sum', { ...model, gen_ai_token_type: 'output' }), 24);
  assert.equal(sample(m, 'gen_ai_server_time_to_first_token_seconds_count', model), 2);
  assert.equal(sample(m, 'gen_ai_client_operation_duration_seconds_count', model), 3);
  // The third stream reported no usage: it is charged an estimate of what it delivered, counted
  // apart from what providers report.
  for (const [source, n] of [['body', 1], ['stream', 1], ['estimate', 1], ['none', 0]])
    assert.equal(sample(m, 'contextgate_model_responses_total', { upstream: 'fake', source }), n, source);
  assert.ok(sample(m, 'contextgate_http_open_connections') >= 1);
  assert.ok(sample(m, 'contextgate_upstream_connections', { upstream: 'fake' }) >= 1);

  await until(() => gw.output().split('\n').filter((l) => l.includes('"type":"access"')).length >= 4, 2000);
  const lines = gw.output().trim().split('\n').map((l) => JSON.parse(l));  // every line is JSON
  assert.ok(lines.every((l) => l.time && l.level));
  const access = lines.filter((l) => l.type === 'access' && l.path === '/v1/chat/completions');
  assert.equal(access.length, 3);
  assert.deepEqual(access.slice(0, 2).map((l) => [l.input_tokens, l.output_tokens]), [[9, 12], [9, 12]]);
  // The stream without usage is logged with what it was charged: its request's bytes / 4, and
  // the 45 content bytes it delivered / 4.
  assert.ok(access[2].input_tokens > 0);
  assert.equal(access[2].output_tokens, 12);
  for (const l of access) {
    assert.match(l.request_id, /^[0-9a-f]{32}$/);
    assert.equal(l.method, 'POST');
    assert.equal(l.status, 200);
    assert.equal(l.upstream, 'fake');
    assert.equal(l.model, 'gpt-4o-mini');
    assert.ok(l.bytes > 0 && l.duration_us > 0 && l.ttfb_us > 0 && l.ttfb_us <= l.duration_us);
  }
  gw.child.kill('SIGTERM');
  await gw.exited;
});

test('upstream metrics: pooled connections, refused connects and first-byte timeouts', async () => {
  const closed = await freePort();
  const path = join(dir, 'ops-upstreams.yaml');
  writeFileSync(path, `server:
  listen: 127.0.0.1:0
  workers: 1
upstreams:
  - name: fake
    base_url: http://127.0.0.1:${FAKE_PORT}/v1
    models: ["gpt-*"]
    first_byte_timeout: 200ms
  - name: gone
    base_url: http://127.0.0.1:${closed}/v1
    models: ["gone-*"]
context:
  data_dir: ${join(dir, 'ops-upstreams.data')}
`);
  const gw = await startGateway(path);
  const refused = await chat(gw.base, null, {}, JSON.stringify({ model: 'gone-1', messages: [] }));
  assert.equal(refused.status, 502);
  const slow = await chat(gw.base, null, { 'x-fake-delay-ms': '1000' });
  assert.equal(slow.status, 504);
  assert.equal((await chat(gw.base)).status, 200);
  const m = await scrapeWhen(`${gw.base}/metrics`, (s) =>
    sample(s, 'contextgate_upstream_idle_connections', { upstream: 'fake' }) === 1 &&
    sample(s, 'contextgate_http_request_duration_seconds_count', { route: 'passthrough', method: 'POST', status: '2xx' }) === 1);
  // The timed-out connection was closed; the 200's went back to the pool.
  assert.equal(sample(m, 'contextgate_upstream_idle_connections', { upstream: 'fake' }), 1);
  assert.equal(sample(m, 'contextgate_upstream_connections', { upstream: 'fake' }), 1);
  assert.equal(sample(m, 'contextgate_upstream_connect_failures_total', { upstream: 'gone', reason: 'refused' }), 1);
  assert.equal(sample(m, 'contextgate_upstream_timeouts_total', { upstream: 'fake', phase: 'first_byte' }), 1);
  assert.equal(sample(m, 'contextgate_http_request_duration_seconds_count',
    { route: 'passthrough', method: 'POST', status: '5xx' }), 2);
  gw.child.kill('SIGTERM');
  await gw.exited;
});

test('metrics can move to their own address', async () => {
  const config = writeConfig('ops-metrics-listen.yaml', FAKE_PORT, 'metrics:\n  listen: 127.0.0.1:0\n');
  const gw = await startGateway(config);
  await until(() => /metrics on port \d+/.test(gw.output()), 2000);
  const port = gw.output().match(/metrics on port (\d+)/)[1];
  assert.equal((await fetch(`${gw.base}/metrics`)).status, 404);
  const m = await scrape(`http://127.0.0.1:${port}/metrics`);
  assert.equal(sample(m, 'contextgate_agent_runs_active'), 0);
  gw.child.kill('SIGTERM');
  await gw.exited;
});

test('virtual keys: made, used by the openai client, never sent upstream, restricted, revoked', async () => {
  const config = writeConfig('ops-keys.yaml', FAKE_PORT, `admin:\n  api_key: ${ADMIN_KEY}\n`);
  const gw = await startGateway(config);
  // No keys yet: /v1 is open as before.
  assert.equal((await chat(gw.base, 'anything')).status, 200);
  assert.equal((await admin(gw.base, 'GET', '/admin/keys', undefined, 'wrong-admin-key-00000')).status, 401);
  const key = await newKey(gw.base, { name: 'ide', models: ['gpt-4o*'] });
  assert.deepEqual(key.models, ['gpt-4o*']);

  // Now every /v1 request needs a live key.
  assert.equal((await chat(gw.base)).status, 401);
  const wrong = await chat(gw.base, 'sk-cg-not-a-key');
  assert.equal(wrong.status, 401);
  assert.equal((await wrong.json()).error.code, 'invalid_api_key');
  const openai = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: key.key, maxRetries: 0 });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(answer.usage.total_tokens, 21);

  // What the upstream received, byte for byte: its own key, not the virtual one, whichever
  // header carried it.
  for (const headers of [{ authorization: `Bearer ${key.key}` }, { 'x-api-key': key.key }]) {
    const echoed = await fetch(`${gw.base}/v1/chat/completions`, {
      method: 'POST', headers: { ...headers, 'x-fake-mode': 'echo', 'content-type': 'application/json' }, body: CHAT,
    });
    assert.equal(echoed.status, 200);
    const raw = await echoed.text();
    assert.ok(!raw.includes(key.key), raw);
    assert.match(raw, new RegExp(`\\r\\nauthorization: Bearer ${UPSTREAM_KEY}\\r\\n`, 'i'));
    assert.ok(!/x-api-key/i.test(raw), raw);
  }

  const refused = await chat(gw.base, key.key, {}, JSON.stringify({ model: 'o3', messages: [] }));
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).error.code, 'model_not_allowed');
  // Two model members: the upstream's parser keeps the last, so the limit is checked against it.
  const smuggled = await chat(gw.base, key.key, {}, '{"model":"gpt-4o-mini","messages":[],"model":"o3"}');
  assert.equal(smuggled.status, 403);
  assert.equal((await smuggled.json()).error.code, 'model_not_allowed');

  // An expiry in the past and a revocation take effect on the next request.
  const patched = await admin(gw.base, 'PATCH', `/admin/keys/${key.id}`, { expires_at: '2020-01-01T00:00:00Z' });
  assert.equal(patched.status, 200);
  assert.equal(patched.json.expires_at, '2020-01-01T00:00:00Z');
  const expired = await chat(gw.base, key.key);
  assert.equal(expired.status, 401);
  assert.match((await expired.json()).error.message, /expired/);
  assert.equal((await admin(gw.base, 'PATCH', `/admin/keys/${key.id}`, { expires_at: null })).status, 200);
  assert.equal((await chat(gw.base, key.key)).status, 200);
  assert.equal((await admin(gw.base, 'DELETE', `/admin/keys/${key.id}`)).status, 200);
  assert.equal((await chat(gw.base, key.key)).status, 401);
  // Revoking the last key does not open /v1 again.
  assert.equal((await chat(gw.base)).status, 401);
  assert.equal((await admin(gw.base, 'GET', `/admin/keys/${key.id}`)).status, 404);
  // A PATCH racing a DELETE of the same key never puts it back once the DELETE answered.
  const racing = [];
  for (let i = 0; i < 20; i++) racing.push((await admin(gw.base, 'POST', '/admin/keys', { name: `race-${i}` })).json);
  await Promise.all(racing.map((k) => Promise.all([
    admin(gw.base, 'PATCH', `/admin/keys/${k.id}`, { rpm: 7 }),
    admin(gw.base, 'DELETE', `/admin/keys/${k.id}`),
  ])));
  for (const k of racing) {
    assert.equal((await admin(gw.base, 'GET', `/admin/keys/${k.id}`)).status, 404, k.id);
    assert.equal((await chat(gw.base, k.key)).status, 401, k.id);
  }
  const bad = await admin(gw.base, 'POST', '/admin/keys', { name: 'x', rpm: -1 });
  assert.equal(bad.status, 400);
  assert.match(bad.json.error.message, /rpm/);
  gw.child.kill('SIGTERM');
  await gw.exited;
});

test('SIGHUP and POST /admin/reload switch to the file as it is now; a broken file changes nothing', async () => {
  const declared = (key) => `admin:\n  api_key: ${ADMIN_KEY}\n  keys:\n    - name: reloaded\n      key: ${key}\n`;
  const config = writeConfig('ops-reload.yaml', FAKE_PORT, `admin:\n  api_key: ${ADMIN_KEY}\n`);
  const gw = await startGateway(config);
  const reloads = (word) => (gw.output().match(new RegExp(`configuration ${word}`, 'g')) ?? []).length;
  assert.equal((await chat(gw.base)).status, 200);  // no keys: /v1 is open

  // A declared key arrives with SIGHUP: /v1 now wants it, and the openai client uses it.
  const KEY = 'sk-reloaded-0123456789abcdef';
  writeConfig('ops-reload.yaml', FAKE_PORT, declared(KEY));
  gw.child.kill('SIGHUP');
  await until(() => reloads('reloaded') === 1, 5000);
  assert.match(gw.output(), /configuration reloaded \(generation 2\)/);
  assert.equal((await chat(gw.base)).status, 401);
  const openai = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: KEY, maxRetries: 0 });
  const answer = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(answer.usage.total_tokens, 21);

  // A file that does not validate: logged with its line, the running configuration stays.
  writeFileSync(config, 'server:\n  listen: [\n');
  gw.child.kill('SIGHUP');
  await until(() => reloads('not reloaded') === 1, 5000);
  assert.match(gw.output(), /configuration not reloaded, the running one stays: .*ops-reload\.yaml:\d+/);
  assert.equal((await chat(gw.base, KEY)).status, 200);
  const refused = await admin(gw.base, 'POST', '/admin/reload');
  assert.equal(refused.status, 400);
  assert.equal(refused.json.error.code, 'invalid_config');

  // The same through the admin API, with a section that needs a restart: named, not applied.
  writeConfig('ops-reload.yaml', FAKE_PORT, declared('sk-rotated-0123456789abcdef').replace('admin:', 'logging:\n  level: debug\nadmin:'));
  const reloaded = await admin(gw.base, 'POST', '/admin/reload');
  assert.equal(reloaded.status, 200, JSON.stringify(reloaded.json));
  assert.deepEqual(reloaded.json, { reloaded: true, generation: 3, restart_needed: ['logging'] });
  assert.equal((await chat(gw.base, KEY)).status, 401);  // the rotated secret replaced it
  assert.equal((await chat(gw.base, 'sk-rotated-0123456789abcdef')).status, 200);
  gw.child.kill('SIGTERM');
  assert.deepEqual(await gw.exited, { code: 0, signal: null });
});

test('limits: exact counts for requests, tokens, parallel requests and budgets, with OpenAI headers', async () => {
  const config = writeConfig('ops-limits.yaml', FAKE_PORT, `admin:\n  api_key: ${ADMIN_KEY}\n`);
  const gw = await startGateway(config);

  await awayFromMinuteEdge();
  const rpm = await newKey(gw.base, { name: 'rpm', rpm: 3 });
  for (let i = 0; i < 3; ++i) assert.equal((await settledChat(gw, rpm.key)).status, 200);
  const fourth = await settledChat(gw, rpm.key);
  assert.equal(fourth.status, 429);
  const requestsRefusal = (await fourth.json()).error;
  assert.equal(requestsRefusal.code, 'rate_limit_exceeded');
  assert.equal(requestsRefusal.type, 'requests');
  assert.equal(fourth.headers.get('x-ratelimit-limit-requests'), '3');
  assert.equal(fourth.headers.get('x-ratelimit-remaining-requests'), '0');
  assert.match(fourth.headers.get('x-ratelimit-reset-requests'), /^(\d+(\.\d+)?s|\d+ms)$/);
  const wait = Number(fourth.headers.get('retry-after'));
  assert.ok(wait >= 1 && wait <= 60);
  // The official client reads the same answer as a rate limit.
  const openai = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: rpm.key, maxRetries: 0 });
  await assert.rejects(openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [] }),
    (e) => e instanceof OpenAI.RateLimitError);

  // Tokens: reserved from the estimate, settled with the 21 the upstream reports.
  const tpm = await newKey(gw.base, { name: 'tpm', tpm: USED + USED + ESTIMATE - 1 });
  assert.equal((await settledChat(gw, tpm.key)).status, 200);   // 0 + estimate fits
  assert.equal((await settledChat(gw, tpm.key)).status, 200);   // 21 + estimate fits
  const third = await settledChat(gw, tpm.key);                  // 42 + estimate does not
  assert.equal(third.status, 429);
  // As OpenAI says it: a tokens-per-minute refusal has the type "tokens".
  const tokensRefusal = (await third.json()).error;
  assert.equal(tokensRefusal.type, 'tokens');
  assert.equal(tokensRefusal.code, 'rate_limit_exceeded');
  assert.match(tokensRefusal.message, /Rate limit reached for tokens/);
  assert.equal(third.headers.get('x-ratelimit-limit-tokens'), String(USED + USED + ESTIMATE - 1));
  assert.equal(third.headers.get('x-ratelimit-remaining-tokens'), String(ESTIMATE - 1));

  // Parallel: one in flight at a time.
  const one = await newKey(gw.base, { name: 'one', max_parallel: 1 });
  const slow = chat(gw.base, one.key, { 'x-fake-delay-ms': '400' });
  await new Promise((r) => setTimeout(r, 100));
  const second = await chat(gw.base, one.key);
  assert.equal(second.status, 429);
  assert.match((await second.json()).error.message, /at once/);
  assert.equal((await slow).status, 200);
  assert.equal(await soonOk(gw.base, one.key), 200);  // the slot came back

  // Budget: the second request would go past it.
  const budget = await newKey(gw.base, { name: 'budget', budget: { tokens: USED + ESTIMATE - 1, period: 'day' } });
  assert.equal((await settledChat(gw, budget.key)).status, 200);
  const over = await settledChat(gw, budget.key);
  assert.equal(over.status, 429);
  assert.equal((await over.json()).error.code, 'insufficient_quota');

  // Usage so far, per key and in the report.
  const listed = await admin(gw.base, 'GET', '/admin/keys');
  const view = listed.json.data.find((k) => k.id === budget.id);
  // spent_usd: gpt-4o-mini's 9 in and 12 out, $0.00000855, in the key's budget period.
  assert.deepEqual(view.usage, { requests: 1, input_tokens: 9, output_tokens: 12, total_tokens: 21, budget_used: 21, spent_usd: 0.00000855 });
  assert.equal(listed.json.data.find((k) => k.id === rpm.id).usage.requests, 3);
  const report = await admin(gw.base, 'GET', `/admin/usage?key=${tpm.id}&group_by=day,key,model`);
  assert.equal(report.status, 200, JSON.stringify(report.json));
  assert.equal(report.json.data.length, 1);
  // gpt-4o-mini's 18 in and 24 out: 18 x 0.15 + 24 x 0.60 = $0.0000171.
  assert.deepEqual(
    { ...report.json.data[0], day: undefined },
    { day: undefined, key_id: tpm.id, key_name: 'tpm', model: 'gpt-4o-mini', requests: 2, input_tokens: 18, output_tokens: 24, total_tokens: 42,
      cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, usd: 0.0000171, unpriced_requests: 0, estimated_requests: 0,
      cache_hits: 0, saved_usd: 0 });
  assert.equal(report.json.data[0].day, new Date().toISOString().slice(0, 10));
  assert.equal((await admin(gw.base, 'GET', '/admin/usage?from=someday')).status, 400);

  const m = await scrape(`${gw.base}/metrics`);
  for (const kind of ['requests', 'tokens', 'parallel', 'budget'])
    assert.ok(sample(m, 'contextgate_limit_refusals_total', { kind }) >= 1, kind);

  // Budgets survive a restart: the store's usage counts against the period.
  gw.child.kill('SIGTERM');
  await gw.exited;
  const again = await startGateway(config);
  assert.equal((await chat(again.base, budget.key)).status, 429);
  assert.equal((await chat(again.base, rpm.key)).status, 200);  // a new process, a new window
  again.child.kill('SIGTERM');
  await again.exited;
});

test('stream_usage: inject adds include_usage to streamed requests, and only then', async () => {
  const path = join(dir, 'ops-inject.yaml');
  writeFileSync(path, `server:
  listen: 127.0.0.1:0
upstreams:
  - name: fake
    base_url: http://127.0.0.1:${FAKE_PORT}/v1
    stream_usage: inject
context:
  data_dir: ${join(dir, 'ops-inject.data')}
`);
  const gw = await startGateway(path);
  const streamed = JSON.stringify({ model: 'm', stream: true, messages: [] });
  const echoed = await (await chat(gw.base, null, { 'x-fake-mode': 'echo' }, streamed)).text();
  const [head, body] = echoed.split('\r\n\r\n');
  assert.deepEqual(JSON.parse(body).stream_options, { include_usage: true });
  assert.equal(Number(head.match(/content-length: (\d+)/i)[1]), Buffer.byteLength(body));
  const plain = await (await chat(gw.base, null, { 'x-fake-mode': 'echo' }, CHAT)).text();
  assert.ok(plain.endsWith(CHAT));  // not streamed: the body as the client sent it
  gw.child.kill('SIGTERM');
  await gw.exited;
});

test('agent runs report their usage and outcome like the passthrough does', async () => {
  const workspace = join(dir, 'ops-agent-ws');
  mkdirSync(workspace, { recursive: true });
  const config = writeConfig('ops-agent.yaml', FAKE_PORT, `admin:
  api_key: ${ADMIN_KEY}
context:
  data_dir: ${join(dir, 'ops-agent.data')}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
`);
  const gw = await startGateway(config);
  const chat = await api(gw.base, 'POST', '/context/chats', { model: 'gpt-4o-mini', workspace });
  assert.equal(chat.status, 201);
  const started = await api(gw.base, 'POST', `/context/chats/${chat.json.id}/messages`, { content: 'hello' });
  assert.equal(started.status, 202);
  const seen = await runEvents(gw.base, started.json.run_id);
  assert.equal(seen.at(-1).type, 'run.completed');  // the fake's plain text is a final answer
  const report = await admin(gw.base, 'GET', '/admin/usage?key=context');
  assert.deepEqual(report.json.data.map((r) => [r.key_id, r.model, r.requests, r.input_tokens, r.output_tokens]),
    [['context', 'gpt-4o-mini', 1, 9, 12]]);
  const m = await scrapeWhen(`${gw.base}/metrics`, (s) => sample(s, 'contextgate_agent_runs_active') === 0);
  assert.equal(sample(m, 'contextgate_agent_runs_total', { outcome: 'completed' }), 1);
  assert.equal(sample(m, 'contextgate_agent_steps_total'), 1);  // one turn: the final answer
  assert.equal(sample(m, 'contextgate_model_responses_total', { upstream: 'fake', source: 'agent' }), 1);
  assert.equal(sample(m, 'gen_ai_client_token_usage_sum',
    { gen_ai_request_model: 'gpt-4o-mini', gen_ai_token_type: 'output' }), 12);
  assert.equal(sample(m, 'contextgate_agent_runs_active'), 0);
  gw.child.kill('SIGTERM');
  await gw.exited;
});

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// A redis-server of its own on a free loopback port, without persistence.
async function startRedis(port) {
  port ??= await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '',
    '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  redis.stdout.on('data', (d) => { said += d; });
  await until(() => said.includes('Ready to accept connections'), 10_000);
  assert.match(said, /Ready to accept connections/);
  return { redis, port };
}

test('two gateways share one limit through Redis; Redis down lets requests through', async () => {
  const { redis, port } = await startRedis();
  const SECRET = 'sk-shared-0123456789abcdef';
  const PARALLEL = 'sk-parallel-0123456789abcdef';
  const TWO = 'sk-two-at-a-time-0123456789abcdef';
  const extra = `admin:
  keys:
    - name: shared
      key: ${SECRET}
      rpm: 4
    - name: one-at-a-time
      key: ${PARALLEL}
      max_parallel: 1
    - name: two-at-a-time
      key: ${TWO}
      max_parallel: 2
limits:
  backend: redis
  redis_url: redis://127.0.0.1:${port}
`;
  const a = await startGateway(writeConfig('ops-redis-a.yaml', FAKE_PORT, extra));
  const b = await startGateway(writeConfig('ops-redis-b.yaml', FAKE_PORT, extra));
  try {
    await awayFromMinuteEdge();
    for (const gw of [a, b, a, b]) assert.equal((await chat(gw.base, SECRET)).status, 200);
    for (const gw of [a, b]) {
      const refused = await chat(gw.base, SECRET);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
    }
    // Parallel slots are shared too: one in flight on A refuses B.
    const slow = chat(a.base, PARALLEL, { 'x-fake-delay-ms': '400' });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await chat(b.base, PARALLEL)).status, 429);
    assert.equal((await slow).status, 200);
    assert.equal(await soonOk(b.base, PARALLEL), 200);
    // A slot is named by the gateway, not by the client's x-request-id: five requests sharing
    // one id are still five claims, and only two of them fit.
    const same = { 'x-fake-delay-ms': '400', 'x-request-id': 'one-id-for-all' };
    const five = await Promise.all([a, b, a, b, a].map((gw) => chat(gw.base, TWO, same)));
    assert.deepEqual(five.map((r) => r.status).sort(), [200, 200, 429, 429, 429]);
  } finally {
    redis.kill('SIGKILL');
  }
  await new Promise((r) => redis.on('exit', r));
  // The limiter's outage is not the gateway's: let through, counted.
  assert.equal((await chat(a.base, SECRET)).status, 200);
  const m = await scrape(`${a.base}/metrics`);
  assert.ok(sample(m, 'contextgate_limit_backend_errors_total') >= 1);
  assert.match(a.output(), /limits: Redis at 127\.0\.0\.1:\d+: .*let through/);
  for (const gw of [a, b]) gw.child.kill('SIGTERM');
  await Promise.all([a.exited, b.exited]);
});

// The response cache in Redis: an answer one replica stored serves the other, read by the
// official openai client as a stream; with Redis gone a lookup is a miss, not an error.
test('two gateways share the response cache through Redis; Redis down is a miss', async () => {
  const { redis, port } = await startRedis();
  const extra = `routes:
  - model: cached-model
    targets: [{upstream: fake, model: gpt-4o-mini}]
    cache: {ttl: 10m}
cache:
  backend: redis
  redis_url: redis://127.0.0.1:${port}
`;
  const a = await startGateway(writeConfig('ops-cache-a.yaml', FAKE_PORT, extra));
  const b = await startGateway(writeConfig('ops-cache-b.yaml', FAKE_PORT, extra));
  const ask = { model: 'cached-model', messages: [{ role: 'user', content: 'Say hello' }] };
  const openai = (base) => new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-e2e-cache-client', maxRetries: 0 });
  try {
    const first = await openai(a.base).chat.completions.create(ask).withResponse();
    assert.equal(first.response.headers.get('x-contextgate-cache'), 'miss');
    // A stores the answer just after the client has it.
    await scrapeWhen(`${a.base}/metrics`, (m) => sample(m, 'contextgate_cache_stores_total') >= 1);
    const keys = execFileSync('redis-cli', ['-p', String(port), '--scan', '--pattern', 'contextgate:cache:*'])
      .toString().trim().split('\n');
    assert.equal(keys.length, 1, keys.join(','));
    const streamed = await openai(b.base).chat.completions.create({ ...ask, stream: true }).withResponse();
    assert.equal(streamed.response.headers.get('x-contextgate-cache'), 'hit');
    let text = '';
    const ids = new Set();
    for await (const chunk of streamed.data) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(text, first.data.choices[0].message.content);
    assert.equal(ids.size, 1);
    assert.ok(!ids.has(first.data.id));
    const m = await scrape(`${b.base}/metrics`);
    assert.equal(sample(m, 'contextgate_cache_lookups_total', { result: 'hit' }), 1);
    assert.equal(sample(m, 'contextgate_cache_lookups_total', { result: 'miss' }), undefined);
    // The access line says so (and no upstream: none was asked).
    await until(() => / cache=hit /.test(b.output()), 2000);
    assert.match(b.output(), /POST \/v1\/chat\/completions 200 [^\n]* cache=hit model=cached-model/);
  } finally {
    redis.kill('SIGKILL');
  }
  await new Promise((r) => redis.on('exit', r));
  const after = await openai(b.base).chat.completions.create(ask).withResponse();
  assert.equal(after.response.headers.get('x-contextgate-cache'), 'miss');
  assert.equal(after.data.choices[0].message.content, 'Hello from the fake upstream! ✓ ünïcödé');
  const m = await scrape(`${b.base}/metrics`);
  assert.ok(sample(m, 'contextgate_cache_backend_errors_total') >= 1);
  assert.match(b.output(), /cache: Redis at 127\.0\.0\.1:\d+: lookup \(taken as a miss\)/);
  for (const gw of [a, b]) gw.child.kill('SIGTERM');
  await Promise.all([a.exited, b.exited]);
});

// Routes' health is shared by replicas that share limits: a target that failed on one gateway is
// skipped by the others, including one started afterwards (docs/routing.md).
test('gateways sharing Redis share the health of their routes\' targets', async () => {
  const { redis, port } = await startRedis();
  const config = (name) => {
    const path = join(dir, name);
    writeFileSync(path, `server:
  listen: 127.0.0.1:0
  workers: 2
upstreams:
  - name: fake
    base_url: http://127.0.0.1:${FAKE_PORT}/v1
    models: ["gpt-*"]
  - name: dead
    base_url: http://127.0.0.1:1/v1
  - name: dead-too
    base_url: http://127.0.0.1:2/v1
routes:
  - model: smart
    targets: [{upstream: dead, model: gpt-4o-mini}, {upstream: fake, model: gpt-4o-mini}]
  - model: later
    targets: [{upstream: dead-too, model: gpt-4o-mini}, {upstream: fake, model: gpt-4o-mini}]
health:
  cooldown: 60s
admin:
  api_key: ${ADMIN_KEY}
limits:
  backend: redis
  redis_url: redis://127.0.0.1:${port}
context:
  data_dir: ${join(dir, name + '.data')}
  prompts_dir: ${PROMPTS}
`);
    return path;
  };
  const SMART = JSON.stringify({ model: 'smart', messages: [{ role: 'user', content: 'hi' }] });
  const deadState = async (gw, route = 0, upstream = 'dead') => {
    const { json } = await admin(gw.base, 'GET', '/admin/health');
    return json.routes[route].targets.find((t) => t.upstream === upstream).state;
  };
  // Polls an asynchronous condition every 20 ms for at most `ms`.
  const eventually = async (condition, ms) => {
    const deadline = Date.now() + ms;
    while (!(await condition()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };
  const a = await startGateway(config('health-a.yaml'));
  const b = await startGateway(config('health-b.yaml'));
  let c;
  try {
    assert.equal(await deadState(b), 'healthy');
    // A meets the dead target first and falls back; B learns of it without trying it.
    const first = await chat(a.base, undefined, {}, SMART);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-contextgate-attempts'), '2');
    await eventually(async () => (await deadState(b)) === 'cooled', 5000);
    assert.equal(await deadState(b), 'cooled');
    const onB = await chat(b.base, undefined, {}, SMART);
    assert.equal(onB.status, 200);
    assert.equal(onB.headers.get('x-contextgate-upstream'), 'fake');
    assert.equal(onB.headers.get('x-contextgate-attempts'), '1');
    // A replica started during the cooldown reads it from Redis.
    c = await startGateway(config('health-c.yaml'));
    await eventually(async () => (await deadState(c)) === 'cooled', 5000);
    assert.equal(await deadState(c), 'cooled');
    const onC = await chat(c.base, undefined, {}, SMART);
    assert.equal(onC.headers.get('x-contextgate-attempts'), '1');
  } finally {
    redis.kill('SIGKILL');
  }
  await new Promise((r) => redis.on('exit', r));
  // Without Redis each replica keeps its own health, and says so once.
  const alone = await chat(b.base, undefined, {}, SMART);
  assert.equal(alone.status, 200);
  await until(() => /routes: Redis at 127\.0\.0\.1:\d+: .*keeps its own upstream health/.test(b.output()), 5000);
  assert.match(b.output(), /keeps its own upstream health/);
  // Redis back on its port: the replicas share again (B resubscribes within its growing pause,
  // at most 10 s), and a target that fails on A from now on is skipped by B.
  const { redis: again } = await startRedis(port);
  try {
    await until(() => /upstream health is shared through Redis again/.test(b.output()), 15_000);
    assert.match(b.output(), /upstream health is shared through Redis again/);
    const later = JSON.stringify({ model: 'later', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal((await chat(a.base, undefined, {}, later)).headers.get('x-contextgate-attempts'), '2');
    await eventually(async () => (await deadState(b, 1, 'dead-too')) === 'cooled', 5000);
    assert.equal(await deadState(b, 1, 'dead-too'), 'cooled');
  } finally {
    again.kill('SIGKILL');
  }
  for (const gw of [a, b, c]) gw.child.kill('SIGTERM');
  const ends = await Promise.all([a.exited, b.exited, c.exited]);
  for (const end of ends) assert.equal(end.code, 0);
});
