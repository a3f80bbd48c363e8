// The gateway's workflows as an MCP server at /mcp, driven by the official SDK's client
// (@modelcontextprotocol/sdk) over Streamable HTTP, with the scripted model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { PROMPTS, api, dir, runEvents, startGateway, startScriptedFake, writeConfig } from './support.mjs';

const KEY = 'mcp-e2e-key-0123456789';

// A gateway serving /mcp with the shipped workflows, chats in their own workspace.
async function serving(name, script, extra = '') {
  const workspace = join(dir, `${name}-ws`);
  mkdirSync(workspace, { recursive: true });
  const fakePort = await startScriptedFake(script);
  const config = writeConfig(`${name}.yaml`, fakePort, `context:
  data_dir: ${join(dir, `${name}.data`)}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
  api_keys: ["${KEY}"]
mcp:
  serve: true
  model: gpt-test
${extra}`);
  const gw = await startGateway(config);
  return { ...gw, workspace, url: new URL(`${gw.base}/mcp`) };
}

// An SDK client; `elicit` answers approvals (none: the client declares no elicitation).
async function connect(url, { elicit, key = KEY } = {}) {
  const client = new Client({ name: 'e2e', version: '1.0.0' }, { capabilities: elicit ? { elicitation: {} } : {} });
  if (elicit) client.setRequestHandler(ElicitRequestSchema, elicit);
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return { client, transport };
}

// A raw POST to /mcp with `headers`; Node's http lets the test set Host itself.
function post(url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${KEY}`, ...headers },
    }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

test('the SDK client lists the workflows and prompts, calls one with progress and an approval asked through elicitation', async () => {
  const gw = await serving('mcp-serve', ['// Header: two lines of text.']);
  writeFileSync(join(gw.workspace, 'notes.txt'), 'line one\nline two\n');
  const asked = [];
  const { client, transport } = await connect(gw.url, {
    elicit: async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: {} };
    },
  });
  assert.equal(client.getServerVersion().name, 'contextgate');
  assert.ok(transport.sessionId, 'a session id was given');

  const { tools } = await client.listTools();
  const header = tools.find((t) => t.name === 'add_file_header');
  assert.ok(header, tools.map((t) => t.name).join());
  assert.equal(header.title, 'Add a file header');
  assert.deepEqual(header.inputSchema.required, ['path']);
  assert.ok(tools.some((t) => t.name === 'find_todos'));

  const { prompts } = await client.listPrompts();
  assert.ok(prompts.some((p) => p.name === 'coding'), JSON.stringify(prompts));
  const coding = await client.getPrompt({ name: 'coding' });
  assert.equal(coding.messages[0].role, 'user');
  const shown = await api(gw.base, 'GET', '/v1/system-prompts/coding', undefined, { key: KEY });
  assert.equal(coding.messages[0].content.text, shown.json.content);
  await assert.rejects(client.getPrompt({ name: 'nope' }), (e) => e instanceof McpError && e.code === -32602);

  const progress = [];
  const result = await client.callTool({ name: 'add_file_header', arguments: { path: 'notes.txt' } }, undefined, {
    onprogress: (p) => progress.push(p),
  });
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.match(result.content[0].text, /Edited `notes.txt`/);
  assert.equal(readFileSync(join(gw.workspace, 'notes.txt'), 'utf8'), '// Header: two lines of text.\nline one\nline two\n');
  // One question, showing the change.
  assert.equal(asked.length, 1);
  assert.match(asked[0].message, /wants to run `edit_lines`/);
  assert.match(asked[0].message, /\+\/\/ Header: two lines of text\./);
  // Progress for each of the three steps, increasing, to the end.
  assert.deepEqual(progress.map((p) => p.progress), [1, 2, 3, 4, 5, 6]);
  assert.ok(progress.every((p) => p.total === 6));
  assert.match(progress[0].message, /Step `read` started/);
  // The run is an ordinary run, visible through the Context API.
  const runId = result._meta['contextgate/run_id'];
  const run = await api(gw.base, 'GET', `/context/runs/${runId}`, undefined, { key: KEY });
  assert.equal(run.json.status, 'completed');

  // Wrong arguments are a tool error; an unknown tool a protocol error.
  const invalid = await client.callTool({ name: 'add_file_header', arguments: { path: 3 } });
  assert.equal(invalid.isError, true);
  assert.match(invalid.content[0].text, /Invalid arguments for `add_file_header`/);
  await assert.rejects(client.callTool({ name: 'no_such_workflow', arguments: {} }), (e) => e instanceof McpError && e.code === -32602);

  // Ending the session: the id is forgotten.
  const sessionId = transport.sessionId;
  await transport.terminateSession();
  const after = await post(gw.url, { jsonrpc: '2.0', id: 9, method: 'ping' }, { 'mcp-session-id': sessionId });
  assert.equal(after.status, 404);
  await client.close();
});

test('a declined approval fails the call and writes nothing; a client that cannot be asked is told where to run it', async () => {
  const gw = await serving('mcp-decline', ['// Header: a', '// Header: b']);
  writeFileSync(join(gw.workspace, 'a.txt'), 'a\n');
  const declined = await connect(gw.url, { elicit: async () => ({ action: 'decline' }) });
  const refused = await declined.client.callTool({ name: 'add_file_header', arguments: { path: 'a.txt' } });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /`edit_lines` was not approved/);
  assert.equal(readFileSync(join(gw.workspace, 'a.txt'), 'utf8'), 'a\n');
  await declined.client.close();

  const plain = await connect(gw.url);
  const failed = await plain.client.callTool({ name: 'add_file_header', arguments: { path: 'a.txt' } });
  assert.equal(failed.isError, true);
  assert.match(failed.content[0].text, /cannot ask for one/);
  assert.match(failed.content[0].text, /review mode/);
  assert.match(failed.content[0].text, /console/);
  const run = await api(gw.base, 'GET', `/context/runs/${failed._meta['contextgate/run_id']}`, undefined, { key: KEY });
  assert.equal(run.json.status, 'cancelled');
  assert.equal(readFileSync(join(gw.workspace, 'a.txt'), 'utf8'), 'a\n');
  await plain.client.close();
});

test('a call cancelled by the client cancels its run', async () => {
  const gw = await serving('mcp-cancel', ['// Header: c']);
  writeFileSync(join(gw.workspace, 'c.txt'), 'c\n');
  const controller = new AbortController();
  let release;
  const held = new Promise((r) => { release = r; });
  let runId;
  const { client } = await connect(gw.url, {
    elicit: async (_request, extra) => {
      runId = String(extra.requestId).split('/')[1];
      controller.abort('changed my mind');
      await held;
      return { action: 'cancel' };
    },
  });
  await assert.rejects(client.callTool({ name: 'add_file_header', arguments: { path: 'c.txt' } }, undefined, { signal: controller.signal }));
  assert.match(runId, /^run_/);
  const events = await runEvents(gw.base, runId, { key: KEY });
  assert.equal(events.at(-1).type, 'run.cancelled', JSON.stringify(events.map((e) => e.type)));
  assert.equal(readFileSync(join(gw.workspace, 'c.txt'), 'utf8'), 'c\n');
  release();
  await client.close();
});

test('keys, Host and Origin, and malformed messages are refused with clear errors', async () => {
  const gw = await serving('mcp-guard', []);
  // No key: 401 before anything else.
  const anonymous = await post(gw.url, initialize, { authorization: '' });
  assert.equal(anonymous.status, 401);
  await assert.rejects(connect(gw.url, { key: 'wrong' }));
  // DNS rebinding: a foreign Host or Origin is refused, loopback names are served.
  const evil = await post(gw.url, initialize, { host: 'evil.example.com', origin: 'http://evil.example.com' });
  assert.equal(evil.status, 403);
  assert.match(evil.text, /server\.allowed_hosts/);
  const foreignOrigin = await post(gw.url, initialize, { origin: 'https://evil.example.com' });
  assert.equal(foreignOrigin.status, 403);
  const local = await post(gw.url, initialize, { host: `localhost:${gw.url.port}`, origin: `http://localhost:${gw.url.port}` });
  assert.equal(local.status, 200);
  const sessionId = local.headers['mcp-session-id'];
  assert.match(sessionId, /^mcp_[0-9a-f]{32}$/);
  assert.equal(JSON.parse(local.text).result.protocolVersion, '2025-11-25');
  // An unknown version is answered with the newest one.
  const old = await post(gw.url, { ...initialize, params: { ...initialize.params, protocolVersion: '1999-01-01' } });
  assert.equal(JSON.parse(old.text).result.protocolVersion, '2025-11-25');

  const session = { 'mcp-session-id': sessionId };
  const cases = [
    [await post(gw.url, '{"jsonrpc":"2.0",', session), 400, -32700],
    [await post(gw.url, [{ jsonrpc: '2.0', id: 2, method: 'ping' }], session), 400, -32600],
    [await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'ping' }), 400, -32600],
    [await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': 'mcp_unknown' }), 404, -32001],
    [await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { ...session, 'mcp-protocol-version': '1999-01-01' }), 400, -32600],
    [await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, { ...session, 'content-type': 'text/plain' }), 415, -32600],
    [await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'resources/list' }, session), 200, -32601],
  ];
  // A NUL in a tool's arguments: refused before a chat or run is made (no store keeps one).
  const nul = await post(gw.url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'explain_file', arguments: { path: 'a\u0000b' } } }, session);
  cases.push([nul, 400, -32602]);
  assert.match(JSON.parse(nul.text).error.message, /NUL character/);
  for (const [res, status, code] of cases) {
    assert.equal(res.status, status, res.text);
    assert.equal(JSON.parse(res.text).error.code, code, res.text);
  }
  const ping = await post(gw.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, session);
  assert.deepEqual(JSON.parse(ping.text), { jsonrpc: '2.0', id: 3, result: {} });
  const note = await post(gw.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
  assert.equal(note.status, 202);
  assert.equal(note.text, '');
  // Nothing is sent unasked: GET is 405.
  const get = await fetch(gw.url, { headers: { authorization: `Bearer ${KEY}`, accept: 'text/event-stream', 'mcp-session-id': sessionId } });
  assert.equal(get.status, 405);
});

test('with mcp.edits: review a write needs no approval and is kept for review', async () => {
  const gw = await serving('mcp-review', ['// Header: r'], '  edits: review\n');
  writeFileSync(join(gw.workspace, 'r.txt'), 'r\n');
  const { client } = await connect(gw.url);
  const result = await client.callTool({ name: 'add_file_header', arguments: { path: 'r.txt' } });
  assert.equal(result.isError, false, JSON.stringify(result));
  const chatId = result._meta['contextgate/chat_id'];
  const sessions = await api(gw.base, 'GET', `/context/chats/${chatId}/sessions`, undefined, { key: KEY });
  assert.equal(sessions.status, 200);
  assert.ok(sessions.json.data.length >= 1, JSON.stringify(sessions.json));
  await client.close();
});
