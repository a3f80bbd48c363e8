// Black-box: the model catalogue (docs/routing.md, "Which model goes where") through the official
// `openai` npm client and Claude Code's model-picker request. /v1/models lists the routes, the
// names the configuration gives and the upstreams' own lists their globs take, each with its
// price; a misspelt model is a 404 that names the nearest one, and reaches no upstream.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { FAKE, GATEWAY, PROMPTS, dir, startAndWait } from './support.mjs';

let fake;
let gateway;
let base;
let client;

before(async () => {
  fake = await startAndWait(FAKE, ['--port', '0'], /listening on (\d+)/);
  const port = fake.match[1];
  const config = join(dir, 'models.yaml');
  writeFileSync(config, `server:
  listen: 127.0.0.1:0
  workers: 1
upstreams:
  - name: openai
    base_url: http://127.0.0.1:${port}/v1
    models: ["gpt-*"]
  - name: claude
    provider: anthropic
    base_url: http://127.0.0.1:${port}
    api_key: sk-ant-e2e
    auth: replace
    models: ["claude-*"]
routes:
  - model: "smart"
    targets: [{upstream: claude, model: claude-sonnet-4-5}]
context:
  data_dir: ${join(dir, 'models.data')}
  prompts_dir: ${PROMPTS}
`);
  gateway = await startAndWait(GATEWAY, ['serve', '--config', config],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  base = `http://127.0.0.1:${gateway.match[1]}`;
  client = new OpenAI({ apiKey: 'sk-e2e', baseURL: `${base}/v1`, maxRetries: 0 });
});

after(() => {
  gateway?.child.kill('SIGKILL');
  fake?.child.kill('SIGKILL');
});

const everything = ['smart', 'gpt-4o-mini', 'gpt-4o', 'claude-sonnet-4-5', 'claude-opus-4-1',
  'claude-haiku-4-5'];

test('models.list offers the route, the OpenAI models and the Claude models its glob takes', async () => {
  const ids = [];
  const prices = {};
  for await (const model of client.models.list()) {
    ids.push(model.id);
    prices[model.id] = model.contextgate_price;
  }
  assert.deepEqual(ids, everything);
  // Each with what the gateway charges for it (the shipped table), one member more per entry.
  assert.deepEqual(prices['gpt-4o-mini'],
    { unit: 'usd_per_1m_tokens', input: 0.15, output: 0.6, cache_read: 0.075 });
  assert.equal(prices.smart.input, 3);
  assert.equal(prices.smart.long_context.above, 200000);
});

test('a misspelt model is a NotFoundError naming the nearest one', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'gtp-4o', messages: [{ role: 'user', content: 'hi' }] }),
    (error) => {
      assert.ok(error instanceof OpenAI.NotFoundError, String(error));
      assert.equal(error.status, 404);
      assert.equal(error.code, 'model_not_found');
      assert.equal(error.param, 'model');
      assert.match(error.message, /The model `gtp-4o` does not exist.*did you mean `gpt-4o`/);
      return true;
    });
  await assert.rejects(client.chat.completions.create({ model: 'smrat', messages: [] }),
    (error) => error instanceof OpenAI.NotFoundError && /`smart`/.test(error.message));
});

test("Claude Code's model picker gets Anthropic's page", async () => {
  const headers = {
    'x-api-key': 'sk-ant-client',
    'anthropic-version': '2023-06-01',
    'anthropic-beta': 'oauth-2025-04-20',
    'user-agent': 'claude-cli/2.0.0 (external, cli)',
  };
  const first = await fetch(`${base}/v1/models?limit=4`, { headers });
  assert.equal(first.status, 200);
  const page = await first.json();
  assert.deepEqual(page.data.map((m) => m.id), everything.slice(0, 4));
  assert.equal(page.data[0].type, 'model');
  assert.equal(page.data[3].display_name, 'Fake claude-sonnet-4-5');
  assert.match(page.data[3].created_at, /^\d{4}-\d\d-\d\dT/);
  assert.equal(page.has_more, true);
  assert.equal(page.first_id, 'smart');
  assert.equal(page.last_id, 'claude-sonnet-4-5');
  const rest = await (await fetch(`${base}/v1/models?limit=4&after_id=${page.last_id}`, { headers })).json();
  assert.deepEqual(rest.data.map((m) => m.id), everything.slice(4));
  assert.equal(rest.has_more, false);

  // A misspelt model on Claude Code's own API is Anthropic's not_found_error.
  const unknown = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'cluade-opus-4-1', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(unknown.status, 404);
  const said = await unknown.json();
  assert.equal(said.type, 'error');
  assert.equal(said.error.type, 'not_found_error');
  assert.match(said.error.message, /did you mean `claude-opus-4-1`/);
});
