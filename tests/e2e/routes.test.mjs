// Black-box: the official `openai` npm client against a route whose first target refuses every
// connection. The gateway falls back before anything reaches the client, which sees one clean
// stream (docs/routing.md).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { FAKE, GATEWAY, PROMPTS, dir, startAndWait } from './support.mjs';

let fake;
let gateway;
let client;

before(async () => {
  fake = await startAndWait(FAKE, ['--port', '0'], /listening on (\d+)/);
  const config = join(dir, 'routes.yaml');
  writeFileSync(config, `server:
  listen: 127.0.0.1:0
  workers: 1
upstreams:
  - name: fake
    base_url: http://127.0.0.1:${fake.match[1]}/v1
    models: ["gpt-*"]
  - name: dead
    base_url: http://127.0.0.1:1/v1
routes:
  - model: "smart"
    targets: [{upstream: dead, model: gpt-4o-mini}, {upstream: fake, model: gpt-4o-mini}]
context:
  data_dir: ${join(dir, 'routes.data')}
  prompts_dir: ${PROMPTS}
`);
  gateway = await startAndWait(GATEWAY, ['serve', '--config', config],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  client = new OpenAI({ apiKey: 'sk-e2e', baseURL: `http://127.0.0.1:${gateway.match[1]}/v1` });
});

after(() => {
  gateway?.child.kill('SIGKILL');
  fake?.child.kill('SIGKILL');
});

test('a stream from the fallback target reaches the client clean', async () => {
  const { data: stream, response } = await client.chat.completions
    .create({ model: 'smart', messages: [{ role: 'user', content: 'Say hello' }], stream: true })
    .withResponse();
  assert.equal(response.headers.get('x-contextgate-upstream'), 'fake');
  assert.equal(response.headers.get('x-contextgate-attempts'), '2');
  let text = '';
  let roles = 0;
  let finish;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.delta.role) roles += 1;
    text += choice.delta.content ?? '';
    finish ??= choice.finish_reason ?? undefined;
  }
  assert.equal(roles, 1);
  assert.equal(text, 'Hello from the fake upstream! \u2713 \u00fcn\u00efc\u00f6d\u00e9');
  assert.equal(finish, 'stop');
});

test('the cooled target is skipped on the next request', async () => {
  const { response } = await client.chat.completions
    .create({ model: 'smart', messages: [{ role: 'user', content: 'Again' }] })
    .withResponse();
  assert.equal(response.headers.get('x-contextgate-upstream'), 'fake');
  assert.equal(response.headers.get('x-contextgate-attempts'), '1');
});
