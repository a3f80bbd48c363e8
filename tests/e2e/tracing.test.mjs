// OpenTelemetry traces: the gateway's spans as a collector receives them (OTLP/HTTP protobuf,
// decoded with the official proto definitions by otlp_collector.mjs). A request traced by its
// client (the official openai client sending a traceparent) gets a SERVER span under the
// client's span and one CLIENT span per upstream attempt with the GenAI attributes; the upstream
// hears the attempt's traceparent; an agent run is invoke_agent → chat and execute_tool;
// sampling follows the client's flag and tracing.sample_ratio; a collector that is down costs
// requests nothing and its drops are counted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { FAKE, PROMPTS, api, dir, runEvents, startAndWait, startGateway, startScriptedFake, until } from './support.mjs';
import { startCollector } from './otlp_collector.mjs';

const KEY = 'e2e-tracing-key-0123456789';
let fake;
let collector;
let deadPort;

// A port nothing listens on: connections to it are refused.
async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function newTrace() {
  return { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') };
}
const header = (t, flags = '01') => `00-${t.traceId}-${t.spanId}-${flags}`;

function config(name, { upstreamPort, tracing, extra = '' }) {
  const path = join(dir, name);
  if (!extra.includes('context:'))
    extra += `context:\n  data_dir: ${join(dir, name + '.data')}\n  prompts_dir: ${PROMPTS}\n`;
  writeFileSync(path, `server:
  listen: 127.0.0.1:0
  workers: 2
  drain_time: 5s
upstreams:
  - name: fake
    base_url: http://127.0.0.1:${upstreamPort}/v1
    models: ["gpt-*"]
  - name: dead
    base_url: http://127.0.0.1:${deadPort}/v1
    models: ["nothing-*"]
  - name: claude
    provider: anthropic
    base_url: http://127.0.0.1:${upstreamPort}
    api_key: sk-ant-e2e
    auth: replace
    models: ["claude-*"]
  - name: gemini
    provider: gemini
    base_url: http://127.0.0.1:${upstreamPort}/v1beta
    api_key: g-e2e
    auth: replace
    models: ["gemini-*"]
routes:
  - model: smart
    targets: [{upstream: dead, model: gpt-4o-mini}, {upstream: fake, model: gpt-4o-mini}]
tracing:
${tracing}
${extra}`);
  return path;
}

let gw;  // traced, every new trace sampled
before(async () => {
  fake = await startAndWait(FAKE, ['--port', '0'], /listening on (\d+)/);
  collector = await startCollector();
  deadPort = await closedPort();
  gw = await startGateway(config('tracing.yaml', {
    upstreamPort: fake.match[1],
    tracing: `  otlp_endpoint: ${collector.url}\n  export_interval: 100ms`,
  }));
});

after(async () => {
  fake?.child.kill('SIGKILL');
  await collector?.close();
  assert.deepEqual(collector.problems, []);
});

const byAttempt = (a, b) => a.attributes['contextgate.attempt'] - b.attributes['contextgate.attempt'];

test('a routed stream: a SERVER span under the client\'s, a CLIENT span per attempt with the GenAI attributes', async () => {
  const client = newTrace();
  const openai = new OpenAI({
    apiKey: 'sk-e2e', baseURL: `${gw.base}/v1`, maxRetries: 0,
    defaultHeaders: { traceparent: header(client), tracestate: 'vendor=abc' },
  });
  const stream = await openai.chat.completions.create({
    model: 'smart', stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'user', content: 'hello there' }],
  });
  let text = '';
  let usage;
  let model;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    usage = chunk.usage ?? usage;
    model = chunk.model;
  }
  assert.ok(text.length > 0);
  await until(() => collector.trace(client.traceId).length >= 3, 5000);
  const spans = collector.trace(client.traceId);
  assert.equal(spans.length, 3, JSON.stringify(spans.map((s) => s.name)));

  const server = spans.find((s) => s.kind === 'SPAN_KIND_SERVER');
  assert.equal(server.name, 'POST /v1/chat/completions');
  assert.equal(server.parentSpanId, client.spanId);
  assert.equal(server.traceState, 'vendor=abc');
  assert.equal(server.resource['service.name'], 'contextgate');
  assert.equal(server.attributes['http.request.method'], 'POST');
  assert.equal(server.attributes['http.route'], '/v1/chat/completions');
  assert.equal(server.attributes['http.response.status_code'], 200);
  assert.equal(server.status.code, 'STATUS_CODE_UNSET');
  assert.ok(server.end >= server.start);

  const [failed, answered] = spans.filter((s) => s.kind === 'SPAN_KIND_CLIENT').sort(byAttempt);
  for (const [i, s] of [failed, answered].entries()) {
    assert.equal(s.name, 'chat gpt-4o-mini');
    assert.equal(s.parentSpanId, server.spanId);
    assert.equal(s.attributes['contextgate.attempt'], i + 1);
    assert.equal(s.attributes['contextgate.route'], 'smart');
    assert.equal(s.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(s.attributes['gen_ai.provider.name'], 'openai');
    assert.equal(s.attributes['gen_ai.request.model'], 'gpt-4o-mini');
    assert.ok(s.start >= server.start && s.end <= server.end, 'inside the request');
  }
  assert.equal(failed.attributes['contextgate.target'], 'dead');
  assert.equal(failed.attributes['error.type'], 'upstream_unreachable');
  assert.equal(failed.status.code, 'STATUS_CODE_ERROR');
  assert.match(failed.status.message, /connect|refused/i);
  assert.ok(failed.end <= answered.start, 'the second attempt follows the first');

  assert.equal(answered.attributes['contextgate.target'], 'fake');
  assert.equal(answered.status.code, 'STATUS_CODE_UNSET');
  assert.equal(answered.attributes['error.type'], undefined);
  assert.equal(answered.attributes['http.response.status_code'], 200);
  assert.equal(answered.attributes['gen_ai.response.model'], model);
  assert.deepEqual(answered.attributes['gen_ai.response.finish_reasons'], ['stop']);
  assert.equal(answered.attributes['gen_ai.usage.input_tokens'], usage.prompt_tokens);
  assert.equal(answered.attributes['gen_ai.usage.output_tokens'], usage.completion_tokens);
  const ttfc = answered.attributes['gen_ai.response.time_to_first_chunk'];
  assert.ok(ttfc > 0 && ttfc * 1e9 <= Number(answered.end - answered.start), String(ttfc));
  // capture_content is off: no prompt or answer in the trace.
  for (const s of spans)
    for (const key of Object.keys(s.attributes))
      assert.ok(!/messages|arguments|result/.test(key), key);
  assert.ok(!JSON.stringify(spans.map((s) => s.attributes)).includes('hello there'));
});

test('the upstream hears the attempt\'s traceparent in place of the client\'s', async () => {
  const client = newTrace();
  const res = await fetch(`${gw.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-fake-mode': 'echo', traceparent: header(client) },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(res.status, 200);
  const heard = await res.text();  // the request as the upstream received it
  await until(() => collector.trace(client.traceId).length >= 2, 5000);
  const attempt = collector.trace(client.traceId).find((s) => s.kind === 'SPAN_KIND_CLIENT');
  const fields = heard.split('\r\n').filter((l) => /^traceparent:/i.test(l));
  assert.deepEqual(fields, [`traceparent: 00-${client.traceId}-${attempt.spanId}-01`]);
});

test('a request translated to Anthropic: its provider and the finish reason in OpenAI\'s terms', async () => {
  const client = newTrace();
  const openai = new OpenAI({
    apiKey: 'sk-e2e', baseURL: `${gw.base}/v1`, maxRetries: 0,
    defaultHeaders: { traceparent: header(client) },
  });
  const answer = await openai.chat.completions.create({
    model: 'claude-e2e', messages: [{ role: 'user', content: 'hi' }],
  });
  await until(() => collector.trace(client.traceId).length >= 2, 5000);
  const attempt = collector.trace(client.traceId).find((s) => s.kind === 'SPAN_KIND_CLIENT');
  assert.equal(attempt.name, 'chat claude-e2e');
  assert.equal(attempt.attributes['gen_ai.provider.name'], 'anthropic');
  assert.equal(attempt.attributes['gen_ai.response.model'], answer.model);
  assert.deepEqual(attempt.attributes['gen_ai.response.finish_reasons'], [answer.choices[0].finish_reason]);
  assert.equal(attempt.attributes['gen_ai.usage.input_tokens'], answer.usage.prompt_tokens);
  assert.equal(attempt.attributes['contextgate.route'], undefined);  // no route of the configuration
});

test('Gemini\'s API, streamed by @google/genai: generate_content spans named by the route template', async () => {
  const { GoogleGenAI } = await import('@google/genai');
  const client = newTrace();
  const ai = new GoogleGenAI({
    apiKey: 'g-client', httpOptions: { baseUrl: gw.base, headers: { traceparent: header(client) } },
  });
  const stream = await ai.models.generateContentStream({
    model: 'gemini-e2e', contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
  });
  let usage;
  let finish;
  for await (const chunk of stream) {
    usage = chunk.usageMetadata ?? usage;
    finish = chunk.candidates?.[0]?.finishReason ?? finish;
  }
  assert.equal(finish, 'STOP');
  await until(() => collector.trace(client.traceId).length >= 2, 5000);
  const spans = collector.trace(client.traceId);
  const server = spans.find((s) => s.kind === 'SPAN_KIND_SERVER');
  // @google/genai calls Gemini's stable API: the span names the route as the client used it.
  assert.equal(server.attributes['url.path'], '/v1/models/gemini-e2e:streamGenerateContent');
  assert.equal(server.name, 'POST /v1/models/{model}:streamGenerateContent');
  assert.equal(server.attributes['http.route'], '/v1/models/{model}:streamGenerateContent');
  const attempt = spans.find((s) => s.kind === 'SPAN_KIND_CLIENT');
  assert.equal(attempt.name, 'generate_content gemini-e2e');
  assert.equal(attempt.attributes['gen_ai.operation.name'], 'generate_content');
  assert.equal(attempt.attributes['gen_ai.provider.name'], 'gcp.gemini');
  assert.deepEqual(attempt.attributes['gen_ai.response.finish_reasons'], ['stop']);
  assert.equal(attempt.attributes['gen_ai.usage.input_tokens'], usage.promptTokenCount);
  assert.ok(attempt.attributes['gen_ai.response.time_to_first_chunk'] > 0);
});

test('probes and scrapes start no trace of their own; with a caller\'s traceparent they are recorded', async () => {
  for (const path of ['/healthz', '/readyz', '/metrics']) assert.equal((await fetch(gw.base + path)).status, 200);
  const client = newTrace();
  assert.equal((await fetch(`${gw.base}/healthz`, { headers: { traceparent: header(client) } })).status, 200);
  await until(() => collector.trace(client.traceId).length >= 1, 5000);
  const [probe] = collector.trace(client.traceId);
  assert.equal(probe.name, 'GET /healthz');
  // The untraced ones ended first, so they would have been exported no later than this one.
  const paths = collector.spans.map((s) => s.attributes['url.path']);
  assert.equal(paths.filter((p) => p === '/healthz').length, 1);
  assert.ok(!paths.includes('/readyz') && !paths.includes('/metrics'), paths.join(','));
});

test('an agent run: invoke_agent under the request, then chat and execute_tool spans with the approval wait', async () => {
  const workspace = join(dir, 'traced-project');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'README.md'), 'This is teh readme.\n');
  const call = (tool, parameters) => JSON.stringify({ tool, parameters, terminate: false });
  const scripted = await startScriptedFake([
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'the' }),
    'Fixed the typo.',
  ]);
  const agent = await startGateway(config('tracing-agent.yaml', {
    upstreamPort: scripted,
    tracing: `  otlp_endpoint: ${collector.url}\n  export_interval: 100ms\n  capture_content: true`,
    extra: `context:
  data_dir: ${join(dir, 'tracing-agent.data')}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
  api_keys: ["${KEY}"]
`,
  }));
  const chat = await api(agent.base, 'POST', '/context/chats', { model: 'gpt-agent', workspace }, { key: KEY });
  assert.equal(chat.status, 201);
  const client = newTrace();
  const res = await fetch(`${agent.base}/context/chats/${chat.json.id}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, traceparent: header(client) },
    body: JSON.stringify({ content: 'fix the typo' }),
  });
  assert.equal(res.status, 202);
  const runId = (await res.json()).run_id;
  const asked = (await runEvents(agent.base, runId, { key: KEY, stop: (e) => e.type === 'approval.required' })).at(-1);
  assert.equal(asked.type, 'approval.required');
  await new Promise((r) => setTimeout(r, 150));  // a wait the span must show
  const decided = await api(agent.base, 'POST', `/context/runs/${runId}/approvals/${asked.call_id}`,
    { decision: 'approve' }, { key: KEY });
  assert.equal(decided.status, 200);
  const rest = await runEvents(agent.base, runId, { key: KEY, lastEventId: asked.id });
  assert.equal(rest.at(-1).type, 'run.completed');
  assert.equal(readFileSync(join(workspace, 'README.md'), 'utf8'), 'This is the readme.\n');

  const inTrace = () => collector.trace(client.traceId);
  await until(() => inTrace().some((s) => s.name === 'invoke_agent'), 5000);
  const spans = inTrace();
  const request = spans.find((s) => s.kind === 'SPAN_KIND_SERVER');
  assert.equal(request.name, 'POST /context/chats/{id}/messages');
  assert.equal(request.parentSpanId, client.spanId);
  const run = spans.find((s) => s.name === 'invoke_agent');
  assert.equal(run.parentSpanId, request.spanId);
  assert.equal(run.attributes['gen_ai.operation.name'], 'invoke_agent');
  assert.equal(run.attributes['gen_ai.conversation.id'], chat.json.id);
  assert.equal(run.attributes['contextgate.run_id'], runId);
  assert.equal(run.attributes['contextgate.run.status'], 'completed');
  assert.equal(run.attributes['contextgate.run.steps'], 2);

  const steps = spans.filter((s) => s.parentSpanId === run.spanId).sort((a, b) => (a.start < b.start ? -1 : 1));
  assert.deepEqual(steps.map((s) => s.name), ['chat gpt-agent', 'execute_tool replace_in_file', 'chat gpt-agent']);
  const [first, tool, last] = steps;
  assert.equal(first.kind, 'SPAN_KIND_CLIENT');
  assert.equal(first.attributes['gen_ai.provider.name'], 'openai');
  assert.equal(first.attributes['gen_ai.request.model'], 'gpt-agent');
  assert.equal(first.attributes['gen_ai.response.model'], 'gpt-agent');
  assert.deepEqual(first.attributes['gen_ai.response.finish_reasons'], ['stop']);
  // capture_content: true puts the model's answers and the tool's arguments and result in.
  assert.match(last.attributes['gen_ai.output.messages'], /Fixed the typo\./);
  assert.equal(tool.kind, 'SPAN_KIND_INTERNAL');
  assert.equal(tool.attributes['gen_ai.tool.name'], 'replace_in_file');
  assert.equal(tool.attributes['gen_ai.tool.call.id'], asked.call_id);
  assert.equal(tool.attributes['contextgate.tool.outcome'], 'ok');
  assert.ok(tool.attributes['contextgate.approval_wait_seconds'] >= 0.15, String(tool.attributes['contextgate.approval_wait_seconds']));
  assert.equal(JSON.parse(tool.attributes['gen_ai.tool.call.arguments']).replace, 'the');
  assert.ok(first.end <= tool.start && tool.end <= last.start, 'in the order of the run');
  agent.child.kill('SIGTERM');
  await agent.exited;
});

test('sampling: sample_ratio 0 starts no trace of its own, yet follows a client\'s sampled flag', async () => {
  const quiet = await startGateway(config('tracing-sampled.yaml', {
    upstreamPort: fake.match[1],
    tracing: `  otlp_endpoint: ${collector.url}\n  export_interval: 100ms\n  sample_ratio: 0\n  capture_content: true`,
  }));
  const before = new Set(collector.spans.map((s) => s.traceId));
  const send = (headers) => fetch(`${quiet.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-fake-mode': 'echo', ...headers },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  }).then((r) => r.text());
  await send({});
  const unsampled = newTrace();
  const heard = await send({ traceparent: header(unsampled, '00') });
  // Not recorded: the client's own traceparent goes on unchanged.
  assert.match(heard, new RegExp(`\r\ntraceparent: ${header(unsampled, '00')}\r\n`));
  const sampled = newTrace();
  await send({ traceparent: header(sampled) });
  await until(() => collector.trace(sampled.traceId).length >= 2, 5000);
  // capture_content: the messages as the client sent them.
  const attempt = collector.trace(sampled.traceId).find((s) => s.kind === 'SPAN_KIND_CLIENT');
  assert.deepEqual(JSON.parse(attempt.attributes['gen_ai.input.messages']), [{ role: 'user', content: 'hi' }]);
  quiet.child.kill('SIGTERM');
  await quiet.exited;  // its exporter sent what it had before it ended
  const fresh = collector.spans.filter((s) => !before.has(s.traceId)).map((s) => s.traceId);
  assert.deepEqual([...new Set(fresh)], [sampled.traceId]);
});

test('sampling: a caller refused for its credentials is not traced on its own sampled flag', async () => {
  const SECRET = 'sk-e2e-tracing-admitted-0123456789';
  const keyed = await startGateway(config('tracing-refused.yaml', {
    upstreamPort: fake.match[1],
    tracing: `  otlp_endpoint: ${collector.url}\n  export_interval: 100ms\n  sample_ratio: 0`,
    extra: `admin:\n  keys:\n    - name: traced\n      key: ${SECRET}\n      models: ["gpt-4o-mini"]\n`,
  }));
  const before = new Set(collector.spans.map((s) => s.traceId));
  const send = async (trace, key, model = 'gpt-4o-mini') => {
    const headers = { 'content-type': 'application/json', traceparent: header(trace) };
    if (key) headers.authorization = `Bearer ${key}`;
    const res = await fetch(`${keyed.base}/v1/chat/completions`, {
      method: 'POST', headers,
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.text();
    return res.status;
  };
  assert.equal(await send(newTrace()), 401);  // no key
  assert.equal(await send(newTrace(), 'sk-e2e-not-a-key-0123456789'), 401);
  assert.equal(await send(newTrace(), SECRET, 'gpt-3.5-turbo'), 403);  // a model the key may not use
  const admitted = newTrace();
  assert.equal(await send(admitted, SECRET), 200);
  await until(() => collector.trace(admitted.traceId).length >= 2, 5000);
  keyed.child.kill('SIGTERM');
  await keyed.exited;  // its exporter sent what it had before it ended
  const fresh = collector.spans.filter((s) => !before.has(s.traceId)).map((s) => s.traceId);
  assert.deepEqual([...new Set(fresh)], [admitted.traceId]);
});

test('an https collector behind a private CA: verified with tracing.ca_file, refused under another CA', async () => {
  const tlsDir = fileURLToPath(new URL('../data/tls/', import.meta.url));
  const secure = await startCollector({
    tls: { cert: readFileSync(join(tlsDir, 'server.crt')), key: readFileSync(join(tlsDir, 'server.key')) },
  });
  const traced = async (ca) => {
    const gateway = await startGateway(config(`tracing-tls-${ca}.yaml`, {
      upstreamPort: fake.match[1],
      tracing: `  otlp_endpoint: ${secure.url}\n  export_interval: 50ms\n  ca_file: ${join(tlsDir, ca)}`,
    }));
    const client = newTrace();
    const res = await fetch(`${gateway.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: header(client) },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    await res.text();
    return { gateway, client };
  };
  const trusted = await traced('ca.crt');
  await until(() => secure.trace(trusted.client.traceId).length >= 2, 5000);
  assert.equal(secure.trace(trusted.client.traceId).length, 2);
  trusted.gateway.child.kill('SIGTERM');
  await trusted.gateway.exited;

  const distrusted = await traced('other-ca.crt');
  await until(() => /spans not exported/.test(distrusted.gateway.output()), 5000);
  assert.match(distrusted.gateway.output(), /tracing: \d+ spans not exported: cannot reach https:\/\/127\.0\.0\.1:\d+: certificate verify failed/);
  assert.equal(secure.trace(distrusted.client.traceId).length, 0);
  distrusted.gateway.child.kill('SIGTERM');
  await distrusted.gateway.exited;
  await secure.close();
  assert.deepEqual(secure.problems, []);
});

test('a collector that is down: requests are answered as ever, the dropped spans counted', async () => {
  const down = await closedPort();
  const lost = await startGateway(config('tracing-down.yaml', {
    upstreamPort: fake.match[1],
    tracing: `  otlp_endpoint: http://127.0.0.1:${down}\n  export_interval: 50ms`,
  }));
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${lost.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200);
    await res.text();
  }
  const dropped = async () => {
    const text = await (await fetch(`${lost.base}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('contextgate_trace_spans_dropped_total{reason="export_failed"}'));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  // A SERVER and a CLIENT span for each request.
  let count = 0;
  for (const deadline = Date.now() + 5000; (count = await dropped()) < 6 && Date.now() < deadline;)
    await new Promise((r) => setTimeout(r, 20));
  assert.ok(count >= 6, String(count));
  assert.match(lost.output(), /tracing: \d+ spans not exported: cannot reach/);
  lost.child.kill('SIGTERM');
  await lost.exited;
});
