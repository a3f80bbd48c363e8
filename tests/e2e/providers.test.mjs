// Black-box: the official `openai` client reaches Claude, Gemini and Bedrock upstreams (the fake
// speaks their dialects and enforces their rules; its Bedrock verifies the gateway's SigV4
// signatures) through /v1/chat/completions, and the official `@anthropic-ai/sdk` reaches
// /v1/messages through the gateway unchanged; the Anthropic, Responses and Gemini clients reach
// the other providers, Bedrock among them, translated; the AWS SDK reaches Bedrock through
// /bedrock, its own API forwarded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { FAKE, GATEWAY, PROMPTS, dir, startAndWait } from './support.mjs';

let fake;
let gateway;
let openai;
let base;

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        additionalProperties: false,
        properties: { city: { type: 'string' } },
        required: ['city'],
      },
    },
  },
];

before(async () => {
  fake = await startAndWait(FAKE, ['--port', '0'], /listening on (\d+)/);
  const port = fake.match[1];
  const config = join(dir, 'providers.yaml');
  writeFileSync(config, `server:
  listen: 127.0.0.1:0
  workers: 2
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
  - name: gemini
    provider: gemini
    base_url: http://127.0.0.1:${port}/v1beta
    api_key: g-e2e
    auth: replace
    models: ["gemini-*"]
    model_map:
      gemini-flash: gemini-3-flash-preview
  - name: bedrock
    provider: bedrock
    region: us-east-1
    base_url: http://127.0.0.1:${port}
    aws:   # the keys the fake Bedrock knows (tests/support/fake_providers.hpp)
      access_key_id: AKIAFAKEBEDROCK00001
      secret_access_key: fakeBedrockSecretKey/0123456789abcdefghij
    models: ["anthropic.*"]
context:
  data_dir: ${join(dir, 'providers.data')}
  prompts_dir: ${PROMPTS}
`);
  gateway = await startAndWait(GATEWAY, ['serve', '--config', config],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  base = `http://127.0.0.1:${gateway.match[1]}`;
  openai = new OpenAI({ apiKey: 'sk-e2e', baseURL: `${base}/v1`, maxRetries: 0 });
});

after(() => {
  gateway?.child.kill('SIGKILL');
  fake?.child.kill('SIGKILL');
});

// A Bedrock id with its `:`, which travels as %3A.
const bedrockModel = 'anthropic.claude-e2e-v1:0';

for (const model of ['claude-e2e', 'gemini-flash', bedrockModel]) {
  test(`${model}: the openai client assembles a streamed tool call, and the next turn is accepted`, async () => {
    const stream = await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    const calls = [];
    let finish;
    let usage;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.finish_reason) finish = choice.finish_reason;
      for (const part of choice.delta.tool_calls ?? []) {
        calls[part.index] ??= { id: '', name: '', arguments: '' };
        if (part.id) calls[part.index].id = part.id;
        if (part.extra_content) calls[part.index].extra_content = part.extra_content;
        if (part.function?.name) calls[part.index].name = part.function.name;
        calls[part.index].arguments += part.function?.arguments ?? '';
      }
    }
    assert.equal(finish, 'tool_calls');
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'get_weather');
    assert.deepEqual(JSON.parse(calls[0].arguments), { city: 'Paris' });
    assert.ok(calls[0].id.length > 0);
    assert.ok(usage.total_tokens > 0);

    // The SDK's own helper assembles the same call from the stream.
    const runner = openai.chat.completions.stream({
      model,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools,
    });
    const final = await runner.finalChatCompletion();
    const message = final.choices[0].message;
    assert.equal(message.tool_calls[0].function.name, 'get_weather');

    // The assistant message goes back as the SDK returned it, with the result: the provider
    // accepts the turn (Gemini checks its signature, Claude the tool_result pairing) and, the
    // result in hand, answers (the fake calls tools only until a result comes back).
    const next = await openai.chat.completions.create({
      model,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        message,
        { role: 'tool', tool_call_id: message.tool_calls[0].id, content: 'sunny, 21 C' },
      ],
      tools,
    });
    assert.equal(next.choices[0].finish_reason, 'stop');
    assert.equal(next.choices[0].message.content, 'Hello from the fake upstream!');
  });
}

test('the anthropic SDK gets a whole answer from a Bedrock model', async () => {
  const anthropic = new Anthropic({ apiKey: 'sk-ant-client', baseURL: base, maxRetries: 0 });
  const message = await anthropic.messages.create({
    model: bedrockModel,
    max_tokens: 64,
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(message.content[0].text, 'Hello from the fake upstream!');
});

// Claude on Bedrock goes through InvokeModel with the Messages body: thinking blocks keep their
// signatures, which the fake checks when the assistant turn comes back with a tool's result.
test('@anthropic-ai/sdk: thinking and its signature go round a tool call to Claude on Bedrock', async () => {
  const anthropic = new Anthropic({ apiKey: 'sk-ant-client', baseURL: base, maxRetries: 0 });
  const claudeTools = [{ name: 'get_weather', input_schema: tools[0].function.parameters }];
  const thinking = { type: 'enabled', budget_tokens: 1024 };
  const messages = [{ role: 'user', content: 'Weather in Paris?' }];
  const final = await anthropic.messages
    .stream({ model: bedrockModel, max_tokens: 2048, thinking, messages, tools: claudeTools })
    .finalMessage();
  assert.equal(final.stop_reason, 'tool_use');
  assert.equal(final.content[0].type, 'thinking');
  assert.match(final.content[0].signature, /^fake-thinking-/);
  const call = final.content.find((b) => b.type === 'tool_use');
  assert.deepEqual(call.input, { city: 'Paris' });
  const answer = (content) => anthropic.messages.create({
    model: bedrockModel,
    max_tokens: 2048,
    thinking,
    tools: claudeTools,
    messages: [
      ...messages,
      { role: 'assistant', content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny' }] },
    ],
  });
  const next = await answer(final.content);
  assert.equal(next.content[0].type, 'thinking');
  assert.equal(next.content.at(-1).text, 'Hello from the fake upstream!');
  // A signature changed on the way is refused: Bedrock's 400 in Anthropic's envelope.
  const forged = final.content.map((b) => (b.type === 'thinking' ? { ...b, signature: 'forged' } : b));
  await assert.rejects(answer(forged),
    (error) => error.status === 400 && /Invalid `signature`/.test(error.message));
});

test('a field that cannot be translated is an error the SDK surfaces', async () => {
  await assert.rejects(
    openai.chat.completions.create({ model: 'claude-e2e', n: 2, messages: [{ role: 'user', content: 'hi' }] }),
    (error) => error.status === 400 && /`n`/.test(error.message),
  );
});

test('models lists every configured model', async () => {
  const ids = [];
  for await (const m of openai.models.list()) ids.push(m.id);
  assert.ok(ids.includes('gemini-flash'), ids.join(','));
});

test('the anthropic SDK talks to /v1/messages through the gateway, streamed and not', async () => {
  const anthropic = new Anthropic({ apiKey: 'sk-ant-client', baseURL: base, maxRetries: 0 });
  const message = await anthropic.messages.create({
    model: 'claude-e2e',
    max_tokens: 64,
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(message.type, 'message');
  assert.equal(message.content[0].text, 'Hello from the fake upstream!');

  const stream = anthropic.messages.stream({
    model: 'claude-e2e',
    max_tokens: 64,
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools: [{ name: 'get_weather', input_schema: tools[0].function.parameters }],
  });
  const final = await stream.finalMessage();
  assert.equal(final.stop_reason, 'tool_use');
  assert.deepEqual(final.content.find((b) => b.type === 'tool_use').input, { city: 'Paris' });

  // Anthropic's own 400 reaches the SDK unchanged: a tool_use without its tool_result.
  await assert.rejects(
    anthropic.messages.create({
      model: 'claude-e2e',
      max_tokens: 64,
      tools: [{ name: 'get_weather', input_schema: tools[0].function.parameters }],
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: 'and?' },
      ],
    }),
    (error) => error.status === 400 && /tool_result/.test(error.message),
  );
});

// Claude Code's API on every other provider: the official Anthropic SDK's stream helper
// assembles the translated stream (it throws on events out of grammar), and countTokens is
// answered from the gateway's estimate.
for (const model of ['gpt-4o', 'gemini-flash', bedrockModel]) {
  test(`${model}: @anthropic-ai/sdk streams a tool call through /v1/messages and the next turn is taken`, async () => {
    const anthropic = new Anthropic({ apiKey: 'sk-ant-client', baseURL: base, maxRetries: 0 });
    const claudeTools = [{
      name: 'get_weather',
      description: 'The weather in a city',
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    }];
    const messages = [{ role: 'user', content: 'Weather in Paris?' }];
    const stream = anthropic.messages.stream({ model, max_tokens: 200, messages, tools: claudeTools });
    const events = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const final = await stream.finalMessage();
    assert.equal(events[0], 'message_start');
    assert.equal(events.at(-1), 'message_stop');
    assert.equal(final.stop_reason, 'tool_use');
    const calls = final.content.filter((b) => b.type === 'tool_use');
    assert.ok(calls.length >= 1);
    assert.equal(typeof calls[0].input, 'object');
    assert.match(calls[0].id, /^[A-Za-z0-9_-]+$/);

    const next = await anthropic.messages.create({
      model,
      max_tokens: 200,
      tools: claudeTools,
      messages: [
        ...messages,
        { role: 'assistant', content: final.content },
        { role: 'user', content: calls.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: 'Sunny' })) },
      ],
    });
    assert.equal(next.type, 'message');
    assert.equal(next.role, 'assistant');

    const counted = await anthropic.messages.countTokens({ model, messages, tools: claudeTools });
    assert.ok(counted.input_tokens > 0);
  });
}

// Codex's API on Claude and Gemini: the official openai SDK's Responses stream helper, and a
// function call's output sent back as the next turn's input.
for (const model of ['claude-e2e', 'gemini-flash', bedrockModel]) {
  test(`${model}: openai responses.stream() assembles a function call and the round trip is taken`, async () => {
    const responseTools = [{
      type: 'function',
      name: 'get_weather',
      description: 'The weather in a city',
      strict: false,
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    }];
    const input = [{ role: 'user', content: 'Weather in Paris?' }];
    const stream = openai.responses.stream({ model, input, tools: responseTools, store: false });
    const types = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    assert.equal(final.status, 'completed');
    const calls = final.output.filter((item) => item.type === 'function_call');
    assert.ok(calls.length >= 1);
    assert.equal(typeof JSON.parse(calls[0].arguments), 'object');

    const next = await openai.responses.create({
      model,
      store: false,
      tools: responseTools,
      input: [
        ...input,
        ...final.output,
        ...calls.map((c) => ({ type: 'function_call_output', call_id: c.call_id, output: 'Sunny' })),
      ],
    });
    assert.equal(next.status, 'completed');
    assert.ok(next.usage.total_tokens > 0);
  });
}

// Gemini CLI's API on the other providers: the official @google/genai SDK streams a function
// call, and the function response goes back as the next turn.
for (const model of ['gpt-4o', 'claude-e2e', bedrockModel]) {
  test(`${model}: @google/genai streams a function call and the round trip is taken`, async () => {
    const { GoogleGenAI } = await import('@google/genai');
    const ai = new GoogleGenAI({ apiKey: 'g-client', httpOptions: { baseUrl: base } });
    const config = {
      tools: [{
        functionDeclarations: [{
          name: 'get_weather',
          description: 'The weather in a city',
          parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        }],
      }],
    };
    const contents = [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }];
    const stream = await ai.models.generateContentStream({ model, contents, config });
    const calls = [];
    let finish;
    for await (const chunk of stream) {
      for (const call of chunk.functionCalls ?? []) calls.push(call);
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
    }
    assert.equal(finish, 'STOP');
    assert.ok(calls.length >= 1);
    assert.equal(typeof calls[0].args, 'object');

    const next = await ai.models.generateContent({
      model,
      config,
      contents: [
        ...contents,
        { role: 'model', parts: calls.map((c) => ({ functionCall: c })) },
        { role: 'user', parts: calls.map((c) => ({ functionResponse: { id: c.id, name: c.name, response: { output: 'Sunny' } } })) },
      ],
    });
    assert.equal(next.candidates[0].content.role, 'model');
    assert.ok(next.usageMetadata.totalTokenCount > 0);

    const counted = await ai.models.countTokens({ model, contents });
    assert.ok(counted.totalTokens > 0);
  });
}

// The AWS SDK's own Bedrock client with the gateway's /bedrock as its endpoint: it signs with
// whatever credentials it has (dummy ones here; the gateway drops them and signs with its own,
// which the fake verifies). The SDK speaks HTTP/2 to Bedrock's runtime by default; the gateway's
// listener speaks HTTP/1.1, so the client is given the HTTP/1.1 handler.
function bedrockClient() {
  return new BedrockRuntimeClient({
    endpoint: `${base}/bedrock`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIADUMMYCLIENTKEY01', secretAccessKey: 'dummy-secret' },
    requestHandler: new NodeHttpHandler(),
    maxAttempts: 1,
  });
}

test('the AWS SDK streams ConverseStream from a Bedrock model through /bedrock', async () => {
  const out = await bedrockClient().send(new ConverseStreamCommand({
    modelId: bedrockModel,
    messages: [{ role: 'user', content: [{ text: 'hi' }] }],
    inferenceConfig: { maxTokens: 64 },
  }));
  let text = '';
  let usage;
  let stop;
  for await (const event of out.stream) {
    if (event.contentBlockDelta) text += event.contentBlockDelta.delta.text ?? '';
    if (event.messageStop) stop = event.messageStop.stopReason;
    if (event.metadata) usage = event.metadata.usage;
  }
  assert.equal(text, 'Hello from the fake upstream!');
  assert.equal(stop, 'end_turn');
  assert.equal(usage.inputTokens, 10);
});

test('the AWS SDK gets Converse and InvokeModel answers through /bedrock', async () => {
  const client = bedrockClient();
  const converse = await client.send(new ConverseCommand({
    modelId: bedrockModel,
    messages: [{ role: 'user', content: [{ text: 'hi' }] }],
  }));
  assert.equal(converse.output.message.content[0].text, 'Hello from the fake upstream!');
  const invoked = await client.send(new InvokeModelCommand({
    modelId: bedrockModel,
    contentType: 'application/json',
    body: JSON.stringify({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  }));
  const message = JSON.parse(new TextDecoder().decode(invoked.body));
  assert.equal(message.content[0].text, 'Hello from the fake upstream!');
});
