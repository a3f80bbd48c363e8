// MCP servers in the agent loop, with the official servers from npm: server-everything over
// stdio and Streamable HTTP, server-filesystem over stdio, driven by the scripted model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GATEWAY, PROMPTS, api, dir, runEvents, startAndWait, startGateway, startScriptedFake, writeConfig } from './support.mjs';

const modules = fileURLToPath(new URL('./node_modules/@modelcontextprotocol', import.meta.url));
const EVERYTHING = join(modules, 'server-everything', 'dist', 'index.js');
const FILESYSTEM = join(modules, 'server-filesystem', 'dist', 'index.js');
const LOOPBACK = fileURLToPath(new URL('./mcp_loopback.mjs', import.meta.url));
const NODE = process.execPath;
const call = (tool, parameters) => JSON.stringify({ tool, parameters, terminate: false });

// The gateway's view of one MCP server, once `ready(server)` holds (bounded).
async function serverState(base, name, ready = (s) => s.state === 'ready') {
  let found;
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const { json } = await api(base, 'GET', '/context/mcp/servers');
    found = json.servers.find((s) => s.name === name);
    if (found && ready(found)) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`MCP server ${name} never got there: ${JSON.stringify(found)}`);
}

async function startRun(base, workspace, content) {
  const chat = await api(base, 'POST', '/context/chats', { model: 'gpt-test', workspace });
  assert.equal(chat.status, 201);
  const started = await api(base, 'POST', `/context/chats/${chat.json.id}/messages`, { content });
  assert.equal(started.status, 202);
  return started.json.run_id;
}

// Waits for the run's next approval (after event `after`) and decides it; the events up to it.
async function decide(base, runId, after, decision = 'approve') {
  const seen = await runEvents(base, runId, { lastEventId: after, stop: (e) => e.type === 'approval.required' });
  const asked = seen.at(-1);
  assert.equal(asked.type, 'approval.required', JSON.stringify(seen));
  const answer = await api(base, 'POST', `/context/runs/${runId}/approvals/${asked.call_id}`, { decision });
  assert.equal(answer.status, 200, JSON.stringify(answer.json));
  return { asked, seen };
}

function results(events) {
  return events.filter((e) => e.type === 'tool.result');
}

// A gateway config for the scripted model at `fakePort`, chats in `workspace`, and the
// `mcp_servers` entries in `servers` (YAML list items).
function mcpConfig(name, fakePort, workspace, servers) {
  return writeConfig(`${name}.yaml`, fakePort, `context:
  data_dir: ${join(dir, `${name}.data`)}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
mcp_servers:
${servers}`);
}

function workspaceFolder(name) {
  const workspace = join(dir, name);
  mkdirSync(workspace, { recursive: true });
  return workspace;
}

test('stdio server: listed and named for every provider, approved calls, a timeout that costs nothing else, a kill and a restart', async () => {
  const workspace = workspaceFolder('mcp-stdio');
  const fakePort = await startScriptedFake([
    call('mcp__everything__get-sum', { a: 2, b: 3 }),
    call('mcp__everything__trigger-long-running-operation', { duration: 30, steps: 30 }),
    call('mcp__everything__get-sum', { a: 20, b: 22 }),
    call('mcp__everything__get-sum', { a: 5, b: 5 }),
    'All sums done.',
  ]);
  const config = mcpConfig('mcp-stdio', fakePort, workspace, `  - name: everything
    transport: stdio
    command: ${NODE}
    args: ["${EVERYTHING}", "stdio"]
    tools:
      deny: ["toggle-*", "trigger-sampling-*", "trigger-elicitation-*"]
    call_timeout: 1500ms
`);
  const gw = await startGateway(config);
  const server = await serverState(gw.base, 'everything');
  assert.equal(server.transport, 'stdio');
  assert.match(server.protocol_version, /^\d{4}-\d{2}-\d{2}$/);
  assert.equal(server.server_info.name, 'mcp-servers/everything');
  const names = server.tools.map((t) => t.name);
  assert.ok(names.includes('mcp__everything__get-sum'), names.join());
  assert.ok(!names.some((n) => n.includes('toggle')), 'denied tools are left out');
  for (const n of names) assert.match(n, /^[A-Za-z0-9_-]{1,64}$/);
  const sum = server.tools.find((t) => t.name === 'mcp__everything__get-sum');
  assert.equal(sum.tool, 'get-sum');
  assert.equal(sum.read_only, true);
  assert.equal(sum.approval, 'ask', 'readOnlyHint never loosens the default');

  const enhanced = await api(gw.base, 'GET', '/v1/system-prompts/coding/enhanced');
  assert.match(enhanced.json.content, /### MCP server `everything`/);
  assert.match(enhanced.json.content, /`mcp__everything__get-sum`: .*\(needs the user's approval\)/);

  const runId = await startRun(gw.base, workspace, 'add some numbers');
  // 1: asked, approved, answered.
  let { seen } = await decide(gw.base, runId, 0);
  // 2: a call the server does not finish within call_timeout: MCP_TIMEOUT, the run goes on.
  ({ seen } = await decide(gw.base, runId, seen.at(-1).id));
  let done = results(seen);
  assert.equal(done.length, 1);
  assert.equal(done[0].ok, true);
  assert.match(done[0].text, /The sum of 2 and 3 is 5\./);
  // 3: the same server still answers after the timeout.
  ({ seen } = await decide(gw.base, runId, seen.at(-1).id));
  done = results(seen);
  assert.equal(done[0].error_code, 'MCP_TIMEOUT', JSON.stringify(done[0]));
  assert.match(done[0].text, /did not answer within 1500 ms; the call was cancelled/);
  // 4: while the run waits for the next approval the server is killed: reported down, and
  // started again by the gateway; the approved call goes to the new process.
  const asked = await runEvents(gw.base, runId, { lastEventId: seen.at(-1).id, stop: (e) => e.type === 'approval.required' });
  assert.equal(results(asked)[0].ok, true);
  assert.match(results(asked)[0].text, /The sum of 20 and 22 is 42\./);
  const before = await serverState(gw.base, 'everything');
  process.kill(before.pid, 'SIGKILL');
  const down = await serverState(gw.base, 'everything', (s) => s.state !== 'ready' || s.pid !== before.pid);
  if (down.state !== 'ready') assert.match(down.last_error, /killed by signal 9/);
  const restarted = await serverState(gw.base, 'everything', (s) => s.state === 'ready' && s.pid !== before.pid);
  assert.ok(restarted.connects >= 2);
  await api(gw.base, 'POST', `/context/runs/${runId}/approvals/${asked.at(-1).call_id}`, { decision: 'approve' });
  const end = await runEvents(gw.base, runId, { lastEventId: asked.at(-1).id });
  assert.equal(results(end)[0].ok, true, JSON.stringify(results(end)[0]));
  assert.match(results(end)[0].text, /The sum of 5 and 5 is 10\./);
  assert.equal(end.at(-1).type, 'run.completed');
});

test('Streamable HTTP server: calls, a session the server forgot initialized again once, a server gone for good', async () => {
  const workspace = workspaceFolder('mcp-http');
  const startServer = (port) => {
    process.env.PORT = String(port);  // read by the server; startAndWait passes our environment
    const started = startAndWait(NODE, ['--import', LOOPBACK, EVERYTHING, 'streamableHttp'],
      /LOOPBACK_PORT=(\d+)/, 'stderr');
    delete process.env.PORT;
    return started;
  };
  let server = await startServer(0);
  const port = server.match[1];
  const fakePort = await startScriptedFake([
    call('mcp__web__echo', { message: 'über' }),
    call('mcp__web__get-structured-content', { location: 'New York' }),
    call('mcp__web__echo', { message: 'anyone?' }),
    'Echoed.',
  ]);
  const config = mcpConfig('mcp-http', fakePort, workspace, `  - name: web
    transport: http
    url: http://127.0.0.1:${port}/mcp
    headers:
      X-Test-Token: \${MCP_E2E_TOKEN:-secret-token}
    connect_timeout: 2s
`);
  const gw = await startGateway(config);
  const state = await serverState(gw.base, 'web');
  assert.equal(state.transport, 'http');
  assert.equal(state.url, `http://127.0.0.1:${port}/mcp`);
  const runId = await startRun(gw.base, workspace, 'echo');
  const approve = (asked) =>
    api(gw.base, 'POST', `/context/runs/${runId}/approvals/${asked.at(-1).call_id}`, { decision: 'approve' });
  const untilAsked = (after) =>
    runEvents(gw.base, runId, { lastEventId: after, stop: (e) => e.type === 'approval.required' });
  const first = await untilAsked(0);
  await approve(first);
  const second = await untilAsked(first.at(-1).id);
  assert.equal(results(second)[0].text, 'Echo: über');
  // The server restarts (losing every session) before the next call, which must still work.
  server.child.kill('SIGKILL');
  server = await startServer(port);
  await approve(second);
  const third = await untilAsked(second.at(-1).id);
  const got = results(third)[0];
  assert.equal(got.ok, true, JSON.stringify(got));
  assert.deepEqual(Object.keys(got.data.structured).sort(), ['conditions', 'humidity', 'temperature']);
  const after = await serverState(gw.base, 'web');
  assert.equal(after.connects, 2, 'initialized once more, after the 404');
  // Gone for good: the call is MCP_UNAVAILABLE and the run still ends normally.
  server.child.kill('SIGKILL');
  await approve(third);
  const end = await runEvents(gw.base, runId, { lastEventId: third.at(-1).id });
  assert.equal(results(end)[0].error_code, 'MCP_UNAVAILABLE', JSON.stringify(results(end)[0]));
  assert.match(results(end)[0].text, /not connected/);
  assert.equal(end.at(-1).type, 'run.completed');
  const down = await serverState(gw.base, 'web', (s) => s.state !== 'ready');
  assert.match(down.last_error, /cannot reach/);
});

test('filesystem server: tool errors, destructive tools asked about even with approval: always, refresh', async () => {
  const workspace = workspaceFolder('mcp-fs');
  const shared = workspaceFolder('mcp-fs-shared');
  const fakePort = await startScriptedFake([
    call('mcp__files__read_text_file', { path: join(shared, 'missing.txt') }),
    call('mcp__files__write_file', { path: join(shared, 'note.txt'), content: 'written over MCP\n' }),
    call('mcp__files__read_text_file', { path: join(shared, 'note.txt') }),
    'Wrote and read the note.',
  ]);
  const config = mcpConfig('mcp-fs', fakePort, workspace, `  - name: files
    transport: stdio
    command: ${NODE}
    args: ["${FILESYSTEM}", "${shared}"]
    approval: always
    tools:
      deny: ["move_file"]
`);
  const gw = await startGateway(config);
  const state = await serverState(gw.base, 'files');
  const byName = Object.fromEntries(state.tools.map((t) => [t.tool, t]));
  assert.equal(byName.move_file, undefined);
  assert.equal(byName.write_file.destructive, true);
  assert.equal(byName.write_file.approval, 'ask', 'destructiveHint tightens always to ask');
  assert.equal(byName.read_text_file.approval, 'always');
  // The server's read_file does not shadow ours: it is mcp__files__read_file.
  assert.equal(byName.read_file.name, 'mcp__files__read_file');

  const runId = await startRun(gw.base, workspace, 'write a note');
  const { seen } = await decide(gw.base, runId, 0);
  const failed = results(seen)[0];
  assert.equal(failed.ok, false);
  assert.equal(failed.error_code, 'MCP_TOOL_ERROR');
  assert.match(failed.text, /ENOENT|no such file/i);
  assert.equal(seen.at(-1).tool, 'mcp__files__write_file');
  assert.match(seen.at(-1).summary, /Calls `write_file` on the MCP server `files`/);
  const end = await runEvents(gw.base, runId, { lastEventId: seen.at(-1).id });
  assert.equal(readFileSync(join(shared, 'note.txt'), 'utf8'), 'written over MCP\n');
  assert.match(results(end).at(-1).text, /written over MCP/);
  assert.equal(end.at(-1).type, 'run.completed');

  const refreshed = await api(gw.base, 'POST', '/context/mcp/servers/files/refresh');
  assert.equal(refreshed.status, 200);
  assert.equal(refreshed.json.state, 'ready');
  assert.notEqual(refreshed.json.pid, state.pid);
  const unknown = await api(gw.base, 'POST', '/context/mcp/servers/nope/refresh');
  assert.equal(unknown.status, 404);
});

test('a server that cannot start is reported, and runs that do not use it are not affected', async () => {
  const workspace = workspaceFolder('mcp-broken');
  writeFileSync(join(workspace, 'a.txt'), 'alpha\n');
  const fakePort = await startScriptedFake([call('read_file', { path: 'a.txt' }), 'Read it.']);
  const config = mcpConfig('mcp-broken', fakePort, workspace, `  - name: broken
    transport: stdio
    command: ${NODE}
    args: ["-e", "console.error('no config here'); process.exit(3)"]
`);
  const gw = await startGateway(config);
  const state = await serverState(gw.base, 'broken', (s) => s.state === 'down');
  assert.match(state.last_error, /exited with status 3/);
  assert.match(state.last_error, /no config here/);
  const runId = await startRun(gw.base, workspace, 'read a.txt');
  const end = await runEvents(gw.base, runId);
  assert.equal(end.at(-1).type, 'run.completed');
  assert.match(results(end)[0].text, /alpha/);
});

test('contextgate mcp tools|call and tool list --config', () => {
  const server = `${NODE} ${EVERYTHING} stdio`;
  const mcp = (...args) => spawnSync(GATEWAY, ['mcp', ...args], { encoding: 'utf8', timeout: 30_000 });
  const listed = mcp('tools', '--command', server);
  assert.equal(listed.status, 0, listed.stderr);
  assert.ok(JSON.parse(listed.stdout).tools.some((t) => t.name === 'get-sum'));
  const sum = mcp('call', '--command', server, '--tool', 'get-sum', '--params', '{"a":1,"b":2}');
  assert.equal(sum.status, 0, sum.stderr);
  assert.equal(JSON.parse(sum.stdout).content[0].text, 'The sum of 1 and 2 is 3.');
  const bad = mcp('call', '--command', server, '--tool', 'get-sum', '--params', '{"a":"x"}');
  assert.equal(bad.status, 1);
  assert.equal(JSON.parse(bad.stdout).isError, true);
  const late = mcp('call', '--command', server, '--tool', 'trigger-long-running-operation',
    '--params', '{"duration":20,"steps":20}', '--timeout', '500ms');
  assert.equal(late.status, 1);
  assert.match(late.stderr, /no answer within 500 ms/);
  const missing = mcp('tools', '--command', '/nonexistent/server');
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /cannot start/);
  assert.equal(mcp('tools').status, 2);

  const config = writeConfig('mcp-cli.yaml', 1, `mcp_servers:
  - name: everything
    transport: stdio
    command: ${NODE}
    args: ["${EVERYTHING}", "stdio"]
`);
  const catalogue = spawnSync(GATEWAY, ['tool', 'list', '--config', config], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(catalogue.status, 0, catalogue.stderr);
  assert.match(catalogue.stdout, /### MCP server `everything`/);
  assert.match(catalogue.stdout, /`mcp__everything__echo`/);
  const ran = spawnSync(GATEWAY, ['tool', 'run', 'mcp__everything__echo', '--config', config,
    '--params', '{"message":"hi"}'], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(ran.status, 0, ran.stderr);
  assert.equal(ran.stdout.trim(), 'Echo: hi');
});
