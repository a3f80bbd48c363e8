// The gateway as a process under attack: a second instance on its port or data directory,
// SIGTERM with pooled upstream connections, and event-stream watchers that never read.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { FAKE, GATEWAY, PROMPTS, dir, startAndWait, writeConfig } from './support.mjs';

const children = [];
after(() => children.forEach((c) => c.kill('SIGKILL')));

const call = (tool, parameters) => JSON.stringify({ tool, parameters, terminate: false });

async function startFake(script) {
  const args = ['--port', '0'];
  if (script) {
    const file = join(dir, `script-${Date.now()}-${Math.random()}.json`);
    writeFileSync(file, JSON.stringify(script));
    args.push('--script', file);
  }
  const fake = await startAndWait(FAKE, args, /listening on (\d+)/);
  children.push(fake.child);
  return fake.match[1];
}

async function startGateway(config) {
  const gw = await startAndWait(GATEWAY, ['serve', '--config', config],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  children.push(gw.child);
  return { ...gw, port: Number(gw.match[1]), base: `http://127.0.0.1:${gw.match[1]}` };
}

// Runs the binary to its end: exit code and what it printed.
function runToEnd(args, ms = 10_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(GATEWAY, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`still running: ${output}`)); }, ms);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, output }); });
  });
}

function exited(child) {
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
}

async function json(base, method, path, body) {
  const res = await fetch(base + path, {
    method, headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function waitForEvent(base, runId, type) {
  const res = await fetch(`${base}/context/runs/${runId}/events`, { signal: AbortSignal.timeout(20_000) });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${type}: ${buffer.slice(-300)}`);
    buffer += decoder.decode(value, { stream: true });
    const frames = buffer.split('\n\n');
    for (const frame of frames.slice(0, -1)) {
      const data = frame.split('\n').find((l) => l.startsWith('data: '));
      if (!data) continue;
      const event = JSON.parse(data.slice(6));
      if (event.type === type) { await reader.cancel(); return event; }
      if (['run.failed', 'run.cancelled'].includes(event.type))
        throw new Error(`run ended with ${event.type}: ${JSON.stringify(event)}`);
    }
    buffer = frames.at(-1);
  }
}

function rssKiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(status.match(/VmRSS:\s+(\d+) kB/)[1]);
}

test('a second instance on the same port or data directory fails at start, naming the holder', async () => {
  const fakePort = await startFake();
  const first = writeConfig('instance-a.yaml', fakePort);
  const gw = await startGateway(first);

  const samePort = writeConfig('instance-b.yaml', fakePort);
  writeFileSync(samePort, readFileSync(samePort, 'utf8').replace('127.0.0.1:0', `127.0.0.1:${gw.port}`));
  const byPort = await runToEnd(['serve', '--config', samePort]);
  assert.equal(byPort.code, 1, byPort.output);
  assert.match(byPort.output, /cannot listen on 127\.0\.0\.1:\d+: Address already in use/);

  // Another port, the same data directory: refused by the lock, which names the first's pid.
  const sameData = join(dir, 'instance-c.yaml');
  writeFileSync(sameData, readFileSync(first, 'utf8'));
  const byData = await runToEnd(['serve', '--config', sameData]);
  assert.equal(byData.code, 1, byData.output);
  assert.match(byData.output, new RegExp(`in use by another contextgate \\(pid ${gw.child.pid}\\)`));

  // The first one still serves alone.
  const health = await fetch(`${gw.base}/healthz`);
  assert.equal(health.status, 200);
});

test('SIGTERM exits within drain_time although upstream connections are pooled', async () => {
  const workspace = join(dir, 'drain-ws');
  mkdirSync(workspace, { recursive: true });
  const fakePort = await startFake(['All done.']);
  const config = writeConfig('drain.yaml', fakePort, `context:
  data_dir: ${join(dir, 'drain-data')}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
`);
  writeFileSync(config, readFileSync(config, 'utf8').replace('drain_time: 5s', 'drain_time: 2s'));
  const gw = await startGateway(config);
  // One agent run (a pooled model connection) and one passthrough request (a pooled one there).
  const chat = await json(gw.base, 'POST', '/context/chats', { model: 'm', workspace });
  const started = await json(gw.base, 'POST', `/context/chats/${chat.json.id}/messages`, { content: 'hi' });
  await waitForEvent(gw.base, started.json.run_id, 'run.completed');
  const passthrough = await fetch(`${gw.base}/v1/models`);
  assert.equal(passthrough.status, 200);
  await passthrough.text();

  const stopped = exited(gw.child);
  const t0 = Date.now();
  gw.child.kill('SIGTERM');
  const { code } = await stopped;
  const took = Date.now() - t0;
  assert.equal(code, 0, gw.output());
  assert.ok(took < 2000 + 1000, `exit took ${took} ms`);
  assert.doesNotMatch(gw.output(), /exiting without waiting/);
});

test('event-stream watchers that never read hold no large memory', async () => {
  const workspace = join(dir, 'rss-ws');
  mkdirSync(workspace, { recursive: true });
  let big = '';
  while (big.length < 3_600_000) big += `line ${big.length} of a large generated file\n`;
  const fakePort = await startFake([call('create_file', { path: 'big.txt', content: big }), 'Created.']);
  const config = writeConfig('rss.yaml', fakePort, `context:
  data_dir: ${join(dir, 'rss-data')}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
  max_watchers_per_run: 64
`);
  const gw = await startGateway(config);
  const chat = await json(gw.base, 'POST', '/context/chats', { model: 'm', workspace });
  const started = await json(gw.base, 'POST', `/context/chats/${chat.json.id}/messages`, { content: 'write it' });
  const runId = started.json.run_id;
  const approval = await waitForEvent(gw.base, runId, 'approval.required');
  const decided = await json(gw.base, 'POST', `/context/runs/${runId}/approvals/${approval.call_id}`, { decision: 'approve' });
  assert.equal(decided.status, 200);
  await waitForEvent(gw.base, runId, 'run.completed');
  assert.equal(readFileSync(join(workspace, 'big.txt'), 'utf8'), big);

  const before = rssKiB(gw.child.pid);
  // 25 watchers that send their request and then never read a byte.
  const sockets = [];
  for (let i = 0; i < 25; ++i) {
    const socket = net.connect(gw.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(`GET /context/runs/${runId}/events HTTP/1.1\r\nHost: g\r\n\r\n`);
    socket.pause();
    sockets.push(socket);
  }
  // A watcher that reads, opened after them: once it has the whole replay, the gateway has
  // served the stalled ones all it could.
  await waitForEvent(gw.base, runId, 'run.completed');
  const grown = rssKiB(gw.child.pid) - before;
  sockets.forEach((s) => s.destroy());
  // The history holds one 3.6 MB write; each watcher used to hold 16-25 MB of it.
  assert.ok(grown < 40 * 1024, `RSS grew by ${grown} KiB with 25 stalled watchers`);
});
