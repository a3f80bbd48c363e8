// Black-box: the official `openai` client reaches a GPT deployment on Azure OpenAI through the
// gateway's /v1 (its Chat Completions forwarded byte for byte to the deployment's URL with the
// gateway's `api-key`), and `@anthropic-ai/sdk` reaches it translated; the fake's Azure resource
// takes only its api-key, an api-version it knows and the deployments it has
// (tests/support/fake_azure.hpp).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { FAKE, GATEWAY, PROMPTS, dir, startAndWait } from './support.mjs';

const azureKey = 'fake-azure-openai-key-0123456789';  // the fake resource's
let fake;
let gateway;
let base;
let openai;
const sent = [];  // the bodies the openai client sent, byte for byte

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      },
    },
  },
];

before(async () => {
  fake = await startAndWait(FAKE, ['--port', '0'], /listening on (\d+)/);
  const config = join(dir, 'azure.yaml');
  writeFileSync(config, `server:
  listen: 127.0.0.1:0
  workers: 2
upstreams:
  - name: azure
    provider: azure
    base_url: http://127.0.0.1:${fake.match[1]}
    api_key: ${azureKey}
    auth: replace
    api_version: 2024-10-21
    deployments: {gpt-4o: prod-gpt4o}
    models: ["gpt-*"]
context:
  data_dir: ${join(dir, 'azure.data')}
  prompts_dir: ${PROMPTS}
`);
  gateway = await startAndWait(GATEWAY, ['serve', '--config', config],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  base = `http://127.0.0.1:${gateway.match[1]}`;
  openai = new OpenAI({
    apiKey: 'sk-client', baseURL: `${base}/v1`, maxRetries: 0,
    fetch: (url, init) => { sent.push(init?.body); return fetch(url, init); },
  });
});

after(() => {
  gateway?.child.kill('SIGKILL');
  fake?.child.kill('SIGKILL');
});

test('openai: a whole answer and a stream from the gpt-4o deployment', async () => {
  const whole = await openai.chat.completions.create({
    model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }],
  });
  assert.match(whole.choices[0].message.content, /^Hello from the fake upstream!/);
  const stream = await openai.chat.completions.create({
    model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true,
  });
  let text = '';
  let finish;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  assert.match(text, /^Hello from the fake upstream!/);
  assert.equal(finish, 'stop');
});

test('openai: a tool round trip', async () => {
  const messages = [{ role: 'user', content: 'Weather in Paris?' }];
  const called = await openai.chat.completions.create({ model: 'gpt-4o', messages, tools });
  const message = called.choices[0].message;
  assert.equal(called.choices[0].finish_reason, 'tool_calls');
  assert.equal(message.tool_calls[0].function.name, 'get_weather');
  const next = await openai.chat.completions.create({
    model: 'gpt-4o',
    messages: [...messages, message,
      { role: 'tool', tool_call_id: message.tool_calls[0].id, content: 'sunny, 21 C' }],
    tools,
  });
  assert.equal(next.choices[0].finish_reason, 'stop');
});

test('openai: the body reaches the deployment as the client wrote it, with the api-key', async () => {
  // The fake echoes the request it received, line, fields and body.
  const response = await openai.chat.completions
    .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'héllo, "echo"' }], n: 1 },
      { headers: { 'x-fake-mode': 'echo' } })
    .asResponse();
  assert.equal(response.status, 200);
  const echoed = await response.text();
  const [head, body] = [echoed.slice(0, echoed.indexOf('\r\n\r\n')), echoed.slice(echoed.indexOf('\r\n\r\n') + 4)];
  assert.equal(body, sent.at(-1));
  const lines = head.split('\r\n');
  assert.equal(lines[0], 'POST /openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21 HTTP/1.1');
  const fields = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  assert.equal(fields.get('api-key'), azureKey);
  assert.equal(fields.get('authorization'), undefined);
});

test('@anthropic-ai/sdk: a whole answer, a stream and a tool round trip, translated', async () => {
  const anthropic = new Anthropic({ apiKey: 'sk-ant-client', baseURL: base, maxRetries: 0 });
  const whole = await anthropic.messages.create({
    model: 'gpt-4o', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }],
  });
  assert.match(whole.content[0].text, /^Hello from the fake upstream!/);
  const streamed = await anthropic.messages
    .stream({ model: 'gpt-4o', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
    .finalMessage();
  assert.match(streamed.content[0].text, /^Hello from the fake upstream!/);
  const claudeTools = [{ name: 'get_weather', input_schema: tools[0].function.parameters }];
  const messages = [{ role: 'user', content: 'Weather in Paris?' }];
  const called = await anthropic.messages.create({
    model: 'gpt-4o', max_tokens: 256, messages, tools: claudeTools,
  });
  assert.equal(called.stop_reason, 'tool_use');
  const use = called.content.find((b) => b.type === 'tool_use');
  assert.equal(use.name, 'get_weather');
  const next = await anthropic.messages.create({
    model: 'gpt-4o', max_tokens: 256, tools: claudeTools,
    messages: [...messages, { role: 'assistant', content: called.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] }],
  });
  assert.equal(next.stop_reason, 'end_turn');
});
