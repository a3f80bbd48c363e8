// Black-box: Gemini and Claude on Google Vertex AI through the gateway. The official `openai`,
// `@anthropic-ai/sdk` and `@google/genai` clients reach both models on /v1 (JSON, streamed, a tool
// round trip), and `@google/genai` in Vertex mode reaches them through the gateway's /vertex, its
// own API forwarded. The gateway's access token comes from a metadata server played here; the fake
// Vertex refuses any other token.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { FAKE, GATEWAY, PROMPTS, dir, startAndWait } from './support.mjs';

const token = 'ya29.e2e-vertex-token';
let metadata;
let fake;
let gateway;
let base;
let tokensIssued = 0;

const gemini = 'gemini-2.5-flash';
const claude = 'claude-sonnet-4-5@20250929';

const weather = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

before(async () => {
  // A GCE metadata server: the gateway's Vertex token comes from it (no key file is configured).
  metadata = createServer((req, res) => {
    if (req.headers['metadata-flavor'] !== 'Google' ||
        !req.url.startsWith('/computeMetadata/v1/instance/service-accounts/default/token')) {
      res.writeHead(404).end();
      return;
    }
    tokensIssued += 1;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Metadata-Flavor': 'Google' })
      .end(JSON.stringify({ access_token: token, expires_in: 3599, token_type: 'Bearer' }));
  });
  await new Promise((resolve) => metadata.listen(0, '127.0.0.1', resolve));
  fake = await startAndWait(FAKE, ['--port', '0', '--vertex-token', token], /listening on (\d+)/);
  const config = join(dir, 'vertex.yaml');
  writeFileSync(config, `server:
  listen: 127.0.0.1:0
  workers: 2
upstreams:
  - name: vertex
    provider: vertex
    project: e2e-project
    location: us-east5
    base_url: http://127.0.0.1:${fake.match[1]}
    models: ["gemini-*", "claude-*"]
context:
  data_dir: ${join(dir, 'vertex.data')}
  prompts_dir: ${PROMPTS}
`);
  const env = { ...process.env, GCE_METADATA_HOST: `127.0.0.1:${metadata.address().port}` };
  delete env.GOOGLE_APPLICATION_CREDENTIALS;
  const saved = process.env;
  process.env = env;  // startAndWait spawns with the process's environment
  try {
    gateway = await startAndWait(GATEWAY, ['serve', '--config', config],
      /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  } finally {
    process.env = saved;
  }
  base = `http://127.0.0.1:${gateway.match[1]}`;
});

after(() => {
  gateway?.child.kill('SIGKILL');
  fake?.child.kill('SIGKILL');
  metadata?.close();
});

for (const model of [gemini, claude]) {
  test(`${model} on Vertex: the openai client, whole, streamed and a tool round trip`, async () => {
    const openai = new OpenAI({ apiKey: 'sk-client', baseURL: `${base}/v1`, maxRetries: 0 });
    const whole = await openai.chat.completions.create({
      model, messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(whole.choices[0].message.content, 'Hello from the fake upstream!');

    let text = '';
    const stream = await openai.chat.completions.create({
      model, messages: [{ role: 'user', content: 'hi' }], stream: true,
    });
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, 'Hello from the fake upstream!');

    const tools = [{ type: 'function', function: weather }];
    const asked = [{ role: 'user', content: 'Weather in Paris?' }];
    const runner = openai.chat.completions.stream({ model, messages: asked, tools });
    const message = (await runner.finalChatCompletion()).choices[0].message;
    assert.equal(message.tool_calls[0].function.name, 'get_weather');
    assert.deepEqual(JSON.parse(message.tool_calls[0].function.arguments), { city: 'Paris' });
    const next = await openai.chat.completions.create({
      model, tools,
      messages: [...asked, message,
        { role: 'tool', tool_call_id: message.tool_calls[0].id, content: 'sunny, 21 C' }],
    });
    assert.equal(next.choices[0].finish_reason, 'stop');
    assert.equal(next.choices[0].message.content, 'Hello from the fake upstream!');
  });

  test(`${model} on Vertex: the anthropic SDK, whole, streamed and a tool round trip`, async () => {
    const anthropic = new Anthropic({ apiKey: 'sk-ant-client', baseURL: base, maxRetries: 0 });
    const whole = await anthropic.messages.create({
      model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(whole.content[0].text, 'Hello from the fake upstream!');

    const tools = [{ name: weather.name, description: weather.description, input_schema: weather.parameters }];
    const asked = [{ role: 'user', content: 'Weather in Paris?' }];
    const final = await anthropic.messages.stream({ model, max_tokens: 64, messages: asked, tools })
      .finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    const use = final.content.find((b) => b.type === 'tool_use');
    assert.deepEqual(use.input, { city: 'Paris' });
    const next = await anthropic.messages.create({
      model, max_tokens: 64, tools,
      messages: [...asked, { role: 'assistant', content: final.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] }],
    });
    assert.equal(next.stop_reason, 'end_turn');
    assert.equal(next.content[0].text, 'Hello from the fake upstream!');
  });

  test(`${model} on Vertex: @google/genai, whole, streamed and a tool round trip`, async () => {
    const ai = new GoogleGenAI({ apiKey: 'g-client', httpOptions: { baseUrl: base } });
    const whole = await ai.models.generateContent({ model, contents: 'hi' });
    assert.equal(whole.text, 'Hello from the fake upstream!');

    let text = '';
    for await (const chunk of await ai.models.generateContentStream({ model, contents: 'hi' }))
      text += chunk.text ?? '';
    assert.equal(text, 'Hello from the fake upstream!');

    const config = { tools: [{ functionDeclarations: [weather] }] };
    const asked = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
    const called = await ai.models.generateContent({ model, contents: asked, config });
    const call = called.functionCalls[0];
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(call.args, { city: 'Paris' });
    const next = await ai.models.generateContent({
      model, config,
      contents: [...asked, called.candidates[0].content,
        { role: 'user', parts: [{ functionResponse: { name: call.name, response: { weather: 'sunny' } } }] }],
    });
    assert.equal(next.text, 'Hello from the fake upstream!');
  });
}

test('@google/genai in Vertex mode reaches Gemini through /vertex, its own API forwarded', async () => {
  // The SDK's own version first (v1beta1 in Vertex mode), then v1 asked for.
  for (const apiVersion of [undefined, 'v1']) {
    const ai = new GoogleGenAI({
      vertexai: true,
      project: 'the-clients-project',  // replaced by the upstream's
      location: 'europe-west1',
      // No Google credentials of its own: the gateway sends its token.
      googleAuthOptions: { authClient: { getRequestHeaders: async () => new Headers() } },
      httpOptions: { baseUrl: `${base}/vertex/`, ...(apiVersion ? { apiVersion } : {}) },
    });
    const whole = await ai.models.generateContent({ model: gemini, contents: 'hi' });
    assert.equal(whole.text, 'Hello from the fake upstream!', `${apiVersion ?? 'default'}`);
    let text = '';
    for await (const chunk of await ai.models.generateContentStream({ model: gemini, contents: 'hi' }))
      text += chunk.text ?? '';
    assert.equal(text, 'Hello from the fake upstream!');
    const counted = await ai.models.countTokens({ model: gemini, contents: 'hi' });
    assert.equal(counted.totalTokens, 12);
  }
  // One token for every request so far: fetched once, kept until it nears its expiry.
  assert.equal(tokensIssued, 1);
});

