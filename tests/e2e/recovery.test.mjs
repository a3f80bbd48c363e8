// Crash recovery of writes: the gateway is killed (SIGKILL, at a named failpoint) between an
// approved write's approval and its recorded result, and started again on the same data. The
// resumed run looks at the file: the write happened (its result is recorded, it is not done
// twice), did not happen (it runs once), or the file shows neither (the human is asked again,
// with reason "interrupted").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROMPTS, api, dir, runEvents, startGateway, startScriptedFake, writeConfig } from './support.mjs';

const call = (tool, parameters) => JSON.stringify({ tool, parameters, terminate: false });

// A workspace with log.txt, a fake model scripted to append one entry and then answer, and a
// gateway that kills itself at `failpoint` once the append is approved. Returns what the test
// needs to go on after the crash.
async function crashDuringAppend(name, failpoint) {
  const workspace = join(dir, `${name}-ws`);
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'log.txt'), 'start\n');
  const fakePort = await startScriptedFake([call('append_file', { path: 'log.txt', content: 'entry\n' }), 'Done.']);
  const config = writeConfig(`${name}.yaml`, fakePort, `context:
  data_dir: ${join(dir, `${name}-data`)}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
`);
  const gw = await startGateway(config, failpoint);
  const chat = await api(gw.base, 'POST', '/context/chats', { model: 'm', workspace });
  const started = await api(gw.base, 'POST', `/context/chats/${chat.json.id}/messages`, { content: 'log it' });
  const runId = started.json.run_id;
  const asked = (await runEvents(gw.base, runId, { stop: (e) => e.type === 'approval.required' })).at(-1);
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
  const all = await runEvents(gw.base, runId);
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
  const all = await runEvents(gw.base, runId);
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
  const asked = (await runEvents(gw.base, runId, { stop: (e) => e.type === 'approval.required' && e.reason })).at(-1);
  assert.equal(asked.type, 'approval.required');
  assert.equal(asked.reason, 'interrupted');
  assert.equal(asked.call_id, callId);
  const decided = await api(gw.base, 'POST', `/context/runs/${runId}/approvals/${callId}`,
    { decision: 'reject', feedback: 'it is fine as it is' });
  assert.equal(decided.status, 200);
  const rest = await runEvents(gw.base, runId);
  assert.equal(rest.at(-1).type, 'run.completed');
  assert.equal(readFileSync(join(workspace, 'log.txt'), 'utf8'), 'start\nentry\nhuman\n');
});
