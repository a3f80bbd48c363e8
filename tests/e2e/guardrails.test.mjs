// Guardrails through the official openai client: a secret in a streamed Chat Completions request
// is masked before the upstream hears it, a secret the model streams across two events is masked
// before the client reads it, and a block is the SDK's BadRequestError with code
// guardrail_blocked. Neither the gateway's log (at debug level) nor its trace (the OTLP collector)
// ever holds the secret.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { PROMPTS, dir, startGateway, until } from './support.mjs';
import { startCollector } from './otlp_collector.mjs';

// An AWS access key id in the format's own shape (no real key).
const SECRET = 'AKIAZ7QWERTYUIOPASDF';
const MASKED = '[REDACTED:aws_access_key_id]';

// The upstream: keeps each request's body, and streams its answer with the secret cut in two
// events (a JSON answer when not asked to stream).
const heard = [];
let upstream;
function startUpstream() {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      heard.push(body);
      const asked = JSON.parse(body);
      const chunk = (delta, finish = null) => 'data: ' + JSON.stringify({
        id: 'c1', object: 'chat.completion.chunk', created: 1, model: asked.model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      }) + '\n\n';
      if (!asked.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({
          id: 'c1', object: 'chat.completion', created: 1, model: asked.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: '' }));
      res.write(chunk({ content: `key: ${SECRET.slice(0, 9)}` }));
      res.write(chunk({ content: `${SECRET.slice(9)}!` }));
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function newTrace() {
  const t = { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') };
  return { ...t, header: `00-${t.traceId}-${t.spanId}-01` };
}

let collector;
let gw;
before(async () => {
  upstream = await startUpstream();
  collector = await startCollector();
  const path = join(dir, 'guardrails.yaml');
  writeFileSync(path, `server:
  listen: 127.0.0.1:0
  workers: 2
  drain_time: 5s
upstreams:
  - name: fake
    base_url: http://127.0.0.1:${upstream.address().port}/v1
    models: ["*"]
logging:
  level: debug
context:
  data_dir: ${join(dir, 'guardrails.data')}
  prompts_dir: ${PROMPTS}
tracing:
  otlp_endpoint: ${collector.url}
  export_interval: 100ms
guardrails:
  - name: secrets
    detect: [secrets]
    on: [request, response]
    action: mask
    routes: ["gpt-*"]
  - name: strict
    detect: [secrets]
    on: [request]
    action: block
    routes: ["strict-*"]
`);
  gw = await startGateway(path);
});

after(async () => {
  upstream?.close();
  await collector?.close();
  assert.deepEqual(collector.problems, []);
});

const client = (trace) => new OpenAI({
  apiKey: 'sk-e2e', baseURL: `${gw.base}/v1`, maxRetries: 0,
  defaultHeaders: { traceparent: trace.header },
});
const traces = [];

test('a streamed request and its streamed answer are masked both ways', async () => {
  const trace = newTrace();
  traces.push(trace);
  const stream = await client(trace).chat.completions.create({
    model: 'gpt-4o-mini', stream: true,
    messages: [{ role: 'user', content: `deploy with ${SECRET} please` }],
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  assert.equal(text, `key: ${MASKED}!`);
  assert.equal(heard.length, 1);
  assert.ok(!heard[0].includes(SECRET), heard[0]);
  assert.equal(JSON.parse(heard[0]).messages[0].content, `deploy with ${MASKED} please`);
});

test('a block is the SDK\'s BadRequestError with code guardrail_blocked', async () => {
  const trace = newTrace();
  traces.push(trace);
  await assert.rejects(
    client(trace).chat.completions.create({
      model: 'strict-model', stream: true,
      messages: [{ role: 'user', content: `the key is ${SECRET}` }],
    }),
    (error) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'guardrail_blocked');
      assert.match(error.message, /`strict`.*aws_access_key_id/);
      assert.ok(!error.message.includes(SECRET));
      return true;
    });
  assert.equal(heard.length, 1);  // the upstream never heard it
});

test('neither the log nor the trace holds the secret', async () => {
  // Each request's SERVER span has arrived (the blocked one's too).
  await until(() => traces.every((t) => collector.trace(t.traceId).length >= 1), 5000);
  for (const t of traces) assert.ok(collector.trace(t.traceId).length >= 1, 'a span per request');
  const spans = JSON.stringify(collector.spans, (_, v) => (typeof v === 'bigint' ? String(v) : v));
  assert.ok(!spans.includes(SECRET), 'a span holds the secret');
  assert.ok(spans.includes('/v1/chat/completions'));
  // What the gateway logged about them: the guardrail and the rule, not the text.
  await until(() => gw.output().includes('guardrail_blocked'), 5000);
  const log = gw.output();
  assert.match(log, /guardrail `strict` blocked this request \(rule `aws_access_key_id`\)/);
  assert.match(log, /guardrails masked parts of the request/);
  assert.ok(!log.includes(SECRET), 'the log holds the secret');
});
