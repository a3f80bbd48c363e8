// Crash recovery of writes: the gateway is killed (SIGKILL, at a named failpoint) between an
// approved write's approval and its recorded result, and started again on the same data. The
// resumed run looks at the file: the write happened (its result is recorded, it is not done
// twice), did not happen (it runs once), or the file shows neither (the human is asked again,
// with reason "interrupted").
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAKE, GATEWAY, PROMPTS, dir, startAndWait, writeConfig } from './support.mjs';

const children = [];
after(() => children.forEach((c) => c.kill('SIGKILL')));

const call = (tool, parameters) => JSON.stringify({ tool, parameters, terminate: false });

async function startFake(script) {
  const file = join(dir, `recovery-script-${Math.random()}.json`);
  writeFileSync(file, JSON.stringify(script));
  const fake = await startAndWait(FAKE, ['--port', '0', '--script', file], /listening on (\d+)/);
  children.push(fake.child);
  return fake.match[1];
}

// Starts the gateway; `failpoint` names where it kills itself.
function startGateway(config, failpoint) {
  const env = { ...process.env };
  if (failpoint) env.CONTEXTGATE_FAILPOINT = failpoint;
  const child = spawn(GATEWAY, ['serve', '--config', config], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.on('data', (d) => {
      seen += d;
      const match = seen.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (match) resolve({ child, exited, base: `http://127.0.0.1:${match[1]}`, output: () => seen });
    });
    child.on('exit', (code) => reject(new Error(`gateway exited ${code}: ${seen}`)));
  });
}

async function api(base, method, path, body) {
  const res = await fetch(base + path, {
    method, headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

// The run's events from the start, until `stop(event)` or the run ends.
async function events(base, runId, stop = () => false) {
  const res = await fetch(`${base}/context/runs/${runId}/events`, { signal: AbortSignal.timeout(15_000) });
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const seen = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return seen;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split('\n').find((l) => l.startsWith('data: '));
      if (!data) continue;
      const event = JSON.parse(data.slice(6));
      seen.push(event);
      if (stop(event) || ['run.completed', 'run.failed', 'run.cancelled'].includes(event.type)) {
        await reader.cancel();
        return seen;
      }
    }
  }
}

// A workspace with log.txt, a fake model scripted to append one entry and then answer, and a
// gateway that kills itself at `failpoint` once the append is approved. Returns what the test
// needs to go on after the crash.
async function crashDuringAppend(name, failpoint) {
  const workspace = join(dir, `${name}-ws`);
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'log.txt'), 'start\n');
  const fakePort = await startFake([call('append_file', { path: 'log.txt', content: 'entry\n' }), 'Done.']);
  const config = writeConfig(`${name}.yaml`, fakePort, `context:
  data_dir: ${join(dir, `${name}-data`)}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
`);
  const gw = await startGateway(config, failpoint);
  const chat = await api(gw.base, 'POST', '/context/chats', { model: 'm', workspace });
  const started = await api(gw.base, 'POST', `/context/chats/${chat.json.id}/messages`, { content: 'log it' });
  const runId = started.json.run_id;
  const asked = (await events(gw.base, runId, (e) => e.type === 'approval.required')).at(-1);
  assert.equal(asked.type, 'approval.required');
  // The decision is stored before the answer; the process may die right after it.
  await api(gw.base, 'POST', `/context/runs/${runId}/approvals/${asked.call_id}`, { decision: 'approve' })
    .catch(() => {});
  const { signal } = await gw.exited;
  assert.equal(signal, 'SIGKILL', gw.output());
  return { workspace, config, runId, callId: asked.call_id };
}

test('a write that happened before the crash is recorded, not done twice', async () => {
  const { workspace, config, runId } = await crashDuringAppend('happened', 'write.after_execute');
  assert.equal(readFileSync(join(workspace, 'log.txt'), 'utf8'), 'start\nentry\n');
  const gw = await startGateway(config);
  const all = await events(gw.base, runId);
  assert.equal(all.at(-1).type, 'run.completed');
  const result = all.find((e) => e.type === 'tool.result');
  assert.equal(result.ok, true);
  assert.equal(result.data.interrupted, true);
  assert.match(result.text, /completed; the gateway restarted/);
  assert.equal(readFileSync(join(workspace, 'log.txt'), 'utf8'), 'start\nentry\n');
});

test('a write that had not happened runs once after the restart', async () => {
  const { workspace, config, runId } = await crashDuringAppend('not-happened', 'write.before_execute');
  assert.equal(readFileSync(join(workspace, 'log.txt'), 'utf8'), 'start\n');
  const gw = await startGateway(config);
  const all = await events(gw.base, runId);
  assert.equal(all.at(-1).type, 'run.completed');
  const result = all.find((e) => e.type === 'tool.result');
  assert.equal(result.ok, true);
  assert.equal(result.data.interrupted, undefined);
  assert.equal(readFileSync(join(workspace, 'log.txt'), 'utf8'), 'start\nentry\n');
});

test('a write whose outcome cannot be told is put to the human again', async () => {
  const { workspace, config, runId, callId } = await crashDuringAppend('unknown', 'write.after_execute');
  // Someone edits the file before the gateway is back: it is neither as before nor as after.
  writeFileSync(join(workspace, 'log.txt'), 'start\nentry\nhuman\n');
  const gw = await startGateway(config);
  const asked = (await events(gw.base, runId, (e) => e.type === 'approval.required' && e.reason)).at(-1);
  assert.equal(asked.type, 'approval.required');
  assert.equal(asked.reason, 'interrupted');
  assert.equal(asked.call_id, callId);
  const decided = await api(gw.base, 'POST', `/context/runs/${runId}/approvals/${callId}`,
    { decision: 'reject', feedback: 'it is fine as it is' });
  assert.equal(decided.status, 200);
  const rest = await events(gw.base, runId);
  assert.equal(rest.at(-1).type, 'run.completed');
  assert.equal(readFileSync(join(workspace, 'log.txt'), 'utf8'), 'start\nentry\nhuman\n');
});
