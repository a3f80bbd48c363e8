// Black-box: the official `openai` npm client talks to the real contextgate binary, which
// forwards to the fake upstream process. Nothing here knows the gateway's internals.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { FAKE, GATEWAY, dir, startAndWait, until, writeConfig } from './support.mjs';

let fake;
let gateway;
let client;

before(async () => {
  fake = await startAndWait(FAKE, ['--port', '0'], /listening on (\d+)/);
  const config = writeConfig('gateway.yaml', fake.match[1]);
  gateway = await startAndWait(GATEWAY, ['serve', '--config', config],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  client = new OpenAI({ apiKey: 'sk-e2e', baseURL: `http://127.0.0.1:${gateway.match[1]}/v1` });
});

after(() => {
  gateway?.child.kill('SIGKILL');
  fake?.child.kill('SIGKILL');
});

test('chat completion, not streamed', async () => {
  const completion = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Say hello' }],
  });
  assert.equal(completion.choices[0].message.content, 'Hello from the fake upstream! \u2713 \u00fcn\u00efc\u00f6d\u00e9');
  assert.equal(completion.usage.total_tokens, 21);
  assert.equal(completion._request_id, 'req_fake');
  // One access log line per request: method, target, status, bytes, time, upstream, request id.
  // It is written just after the response, so wait for it (bounded) rather than sleep.
  const line = /INFO POST \/v1\/chat\/completions 200 bytes=\d+ time_ms=[\d.]+ ttfb_ms=[\d.]+ upstream=fake model=gpt-4o-mini tokens=9\/12 cost=0\.00000855 id=[0-9a-f]{32}/;
  await until(() => line.test(gateway.output()), 2000);
  assert.match(gateway.output(), line);
});

test('chat completion streamed with usage', async () => {
  const stream = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Say hello' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let role;
  let usage;
  let finish;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    role ??= choice.delta.role;
    text += choice.delta.content ?? '';
    finish ??= choice.finish_reason ?? undefined;
  }
  assert.equal(role, 'assistant');
  assert.equal(text, 'Hello from the fake upstream! \u2713 \u00fcn\u00efc\u00f6d\u00e9');
  assert.equal(finish, 'stop');
  assert.equal(usage.total_tokens, 21);
});

test('chat completion streamed with a tool call, through the SDK stream helper', async () => {
  const runner = client.chat.completions.stream({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools: [{
      type: 'function',
      function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
    }],
  });
  const final = await runner.finalChatCompletion();
  const call = final.choices[0].message.tool_calls[0];
  assert.equal(final.choices[0].finish_reason, 'tool_calls');
  assert.equal(call.id, 'call_fake1');
  assert.equal(call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Paris' });
});

test('models.list', async () => {
  const ids = [];
  for await (const model of client.models.list()) ids.push(model.id);
  assert.deepEqual(ids, ['gpt-4o-mini', 'gpt-4o', 'fake-model']);
});

test('responses.create, not streamed', async () => {
  const response = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say hello' });
  assert.equal(response.output_text, 'Hello from the fake upstream!');
  assert.equal(response.status, 'completed');
});

test('responses.create streamed', async () => {
  const stream = await client.responses.create({ model: 'gpt-4o-mini', input: 'Say hello', stream: true });
  const types = [];
  let text = '';
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === 'response.output_text.delta') text += event.delta;
  }
  assert.equal(text, 'Hello from the fake upstream!');
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.completed');
});

test('a 429 reaches the SDK with retry-after and rate-limit headers', async () => {
  const limited = new OpenAI({
    apiKey: 'sk-e2e', baseURL: client.baseURL, maxRetries: 0,
    defaultHeaders: { 'x-fake-status': '429' },
  });
  await assert.rejects(
    limited.chat.completions.create({ model: 'gpt-4o-mini', messages: [] }),
    (error) => {
      assert.ok(error instanceof OpenAI.RateLimitError);
      assert.equal(error.status, 429);
      assert.equal(error.headers.get('retry-after'), '7');
      assert.equal(error.headers.get('x-ratelimit-remaining-requests'), '0');
      assert.equal(error.code, 'fake_429');
      return true;
    });
});

test('an upstream that dies mid-stream surfaces as an APIError in the SDK', async () => {
  const dying = new OpenAI({
    apiKey: 'sk-e2e', baseURL: client.baseURL, maxRetries: 0,
    defaultHeaders: { 'x-fake-reset-after': '2' },
  });
  const stream = await dying.chat.completions.create({ model: 'gpt-4o-mini', messages: [], stream: true });
  let chunks = 0;
  await assert.rejects((async () => {
    for await (const _ of stream) chunks += 1;
  })(), (error) => {
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.match(error.message, /upstream closed the connection/);
    return true;
  });
  assert.equal(chunks, 2);
});

test('an unreachable upstream is a 502 the SDK reports', async () => {
  const unreachable = await startAndWait(GATEWAY,
    ['serve', '--config', writeConfig('down.yaml', 1)], /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  try {
    const down = new OpenAI({ apiKey: 'sk', baseURL: `http://127.0.0.1:${unreachable.match[1]}/v1`, maxRetries: 0 });
    await assert.rejects(down.models.list(), (error) => {
      assert.equal(error.status, 502);
      assert.equal(error.code, 'upstream_unreachable');
      return true;
    });
  } finally {
    unreachable.child.kill('SIGKILL');
  }
});

test('SIGTERM drains and exits cleanly', async () => {
  const own = await startAndWait(GATEWAY,
    ['serve', '--config', writeConfig('drain.yaml', fake.match[1])],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  const streaming = new OpenAI({
    apiKey: 'sk', baseURL: `http://127.0.0.1:${own.match[1]}/v1`,
    defaultHeaders: { 'x-fake-delay-ms': '50' },
  });
  const stream = await streaming.chat.completions.create({ model: 'm', messages: [], stream: true });
  const exited = new Promise((resolve) => own.child.on('exit', (code) => resolve(code)));
  let text = '';
  let signalled = false;
  for await (const chunk of stream) {
    if (!signalled) {
      own.child.kill('SIGTERM');
      signalled = true;
    }
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  assert.equal(text, 'Hello from the fake upstream! \u2713 \u00fcn\u00efc\u00f6d\u00e9');
  const streamDone = Date.now();
  assert.equal(await exited, 0);
  // Nothing left in flight: the process must not linger (pooled upstream connections included).
  assert.ok(Date.now() - streamDone < 3000, `exited ${Date.now() - streamDone} ms after the stream`);
  assert.match(own.output(), /draining in-flight requests/);
  assert.match(own.output(), /contextgate stopped/);
});

test('check-config prints the effective config with secrets masked', () => {
  const config = writeConfig('check.yaml', 9);
  const ok = spawnSync(GATEWAY, ['check-config', '--config', config],
    { env: { ...process.env, E2E_UPSTREAM_KEY: 'sk-very-secret' }, encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /api_key: "\*\*\*"/);
  assert.doesNotMatch(ok.stdout, /sk-very-secret/);
  const broken = join(dir, 'broken.yaml');
  writeFileSync(broken, 'server:\n  listn: 127.0.0.1:1\nupstreams: []\n');
  const bad = spawnSync(GATEWAY, ['check-config', '--config', broken], { encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /broken\.yaml:2: unknown key `listn` in `server`/);
  const help = spawnSync(GATEWAY, ['--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /contextgate serve/);
  const version = spawnSync(GATEWAY, ['--version'], { encoding: 'utf8' });
  assert.match(version.stdout, /^contextgate \d+\.\d+\.\d+/);
});
