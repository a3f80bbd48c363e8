// Two gateway processes sharing one PostgreSQL store (the test cluster ctest starts with
// tests/support/postgres.sh): a run started on A is watched and approved on B; then A is killed
// (SIGKILL) while a run awaits approval, and B takes the run over, completes it after the
// approval, and its watcher sees every event once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROMPTS, api, dir, runEvents, startGateway, startScriptedFake, writeConfig } from './support.mjs';

const urlFile = process.env.CONTEXTGATE_TEST_PG_URL_FILE;
const call = (tool, parameters) => JSON.stringify({ tool, parameters, terminate: false });

// A fresh schema of the test cluster, as a DSN whose connections use it.
function freshSchema(name) {
  const url = readFileSync(urlFile, 'utf8').trim();
  const schema = `e2e_${name}_${process.pid}`;
  const made = spawnSync('psql', [url, '-q', '-c', `CREATE SCHEMA ${schema}`], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  return `${url}?options=-csearch_path%3D${schema}`;
}

// Two replicas on one store and one workspace, and the scripted model.
async function twoReplicas(name, script) {
  const workspace = join(dir, `${name}-ws`);
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'log.txt'), 'start\n');
  const fakePort = await startScriptedFake(script);
  const dsn = freshSchema(name);
  const replica = (which) => writeConfig(`${name}-${which}.yaml`, fakePort, `context:
  store: {type: postgres, dsn: "${dsn}", lease_timeout: 3s}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
`);
  const a = await startGateway(replica('a'));
  const b = await startGateway(replica('b'));
  return { a, b, workspace };
}

function assertConsecutive(events) {
  events.forEach((e, i) => assert.equal(e.id, i + 1, `event ${i} (${e.type}) has id ${e.id}`));
}

const script = [call('append_file', { path: 'log.txt', content: 'entry\n' }), 'Done.'];

test('a chat made on A is watched and approved on B, and the run goes on', { skip: !urlFile }, async () => {
  const { a, b, workspace } = await twoReplicas('approve', script);
  const chat = await api(a.base, 'POST', '/context/chats', { model: 'm', workspace });
  assert.equal(chat.status, 201);
  const started = await api(a.base, 'POST', `/context/chats/${chat.json.id}/messages`, { content: 'log it' });
  assert.equal(started.status, 202);
  const runId = started.json.run_id;
  const asked = (await runEvents(b.base, runId, { stop: (e) => e.type === 'approval.required' })).at(-1);
  assert.equal(asked.type, 'approval.required');
  const decided = await api(b.base, 'POST', `/context/runs/${runId}/approvals/${asked.call_id}`, { decision: 'approve' });
  assert.equal(decided.status, 200, JSON.stringify(decided.json));
  const all = await runEvents(b.base, runId);
  assert.equal(all.at(-1).type, 'run.completed');
  assertConsecutive(all);
  assert.equal(readFileSync(join(workspace, 'log.txt'), 'utf8'), 'start\nentry\n');
  // Both replicas read the same chat.
  const fromA = await api(a.base, 'GET', `/context/chats/${chat.json.id}`);
  assert.equal(fromA.json.messages.at(-1).content, 'Done.');
});

test('B takes over the run of a killed A and completes it after the approval', { skip: !urlFile }, async () => {
  const { a, b, workspace } = await twoReplicas('takeover', script);
  const chat = await api(a.base, 'POST', '/context/chats', { model: 'm', workspace });
  const started = await api(a.base, 'POST', `/context/chats/${chat.json.id}/messages`, { content: 'log it' });
  const runId = started.json.run_id;
  // One watcher on B from the first event to the last, across the takeover.
  const watched = runEvents(b.base, runId);
  const asked = (await runEvents(b.base, runId, { stop: (e) => e.type === 'approval.required' })).at(-1);
  assert.equal(asked.type, 'approval.required');
  a.child.kill('SIGKILL');
  const { signal } = await a.exited;
  assert.equal(signal, 'SIGKILL');
  // B holds the decision until it has claimed the run (within the lease timeout), then applies it.
  const decided = await api(b.base, 'POST', `/context/runs/${runId}/approvals/${asked.call_id}`, { decision: 'approve' });
  assert.equal(decided.status, 200, JSON.stringify(decided.json));
  const all = await watched;
  assert.equal(all.at(-1).type, 'run.completed', JSON.stringify(all.map((e) => e.type)));
  assertConsecutive(all);
  assert.equal(all.filter((e) => e.type === 'approval.required').length, 1);
  assert.equal(all.filter((e) => e.type === 'approval.resolved').length, 1);
  assert.equal(readFileSync(join(workspace, 'log.txt'), 'utf8'), 'start\nentry\n');
  assert.match(b.output(), new RegExp(`run ${runId}: taken over`));
  const run = await api(b.base, 'GET', `/context/runs/${runId}`);
  assert.equal(run.json.status, 'completed');
});
