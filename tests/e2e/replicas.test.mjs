// Two gateway processes sharing one PostgreSQL store (the test cluster ctest starts with
// tests/support/postgres.sh): a run started on A is watched and approved on B; then A is killed
// (SIGKILL) while a run awaits approval, and B takes the run over, completes it after the
// approval, and its watcher sees every event once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROMPTS, api, dir, runEvents, startGateway, startScriptedFake, until, writeConfig } from './support.mjs';

const urlFile = process.env.CONTEXTGATE_TEST_PG_URL_FILE;
const EVERYTHING = fileURLToPath(
  new URL('./node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));
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
async function twoReplicas(name, script, { drainTime, bServers } = {}) {
  const workspace = join(dir, `${name}-ws`);
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'log.txt'), 'start\n');
  const fakePort = await startScriptedFake(script);
  const dsn = freshSchema(name);
  const replica = (which) => {
    const config = writeConfig(`${name}-${which}.yaml`, fakePort, `context:
  store: {type: postgres, dsn: "${dsn}", lease_timeout: 3s}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
${which === 'b' && bServers ? `mcp_servers:\n${bServers}` : ''}`);
    if (drainTime)
      writeFileSync(config, readFileSync(config, 'utf8').replace('drain_time: 5s', `drain_time: ${drainTime}`));
    return config;
  };
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

test('SIGTERM ends within drain_time with a run, an MCP server and a replica request in flight', { skip: !urlFile }, async () => {
  // A's run waits for approval; B drives a run whose model call hangs, holds an MCP server, and
  // waits for frozen A to answer a decision it forwarded. B must still stop within drain_time.
  const { a, b, workspace } = await twoReplicas('drain', [
    call('append_file', { path: 'log.txt', content: 'entry\n' }),
    { content: 'Too late.', delay_ms: 60000 },
  ], {
    drainTime: '2s',
    bServers: `  - name: everything\n    transport: stdio\n    command: ${process.execPath}\n    args: ["${EVERYTHING}", "stdio"]\n`,
  });
  const first = await api(a.base, 'POST', '/context/chats', { model: 'm', workspace });
  const onA = await api(a.base, 'POST', `/context/chats/${first.json.id}/messages`, { content: 'log it' });
  const asked = (await runEvents(a.base, onA.json.run_id, { stop: (e) => e.type === 'approval.required' })).at(-1);
  assert.equal(asked.type, 'approval.required');
  const second = await api(b.base, 'POST', '/context/chats', { model: 'm', workspace });
  const onB = await api(b.base, 'POST', `/context/chats/${second.json.id}/messages`, { content: 'think' });
  const requested = await runEvents(b.base, onB.json.run_id, { stop: (e) => e.type === 'model.requested' });
  assert.equal(requested.at(-1).type, 'model.requested');
  let mcp;
  for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
    mcp = (await api(b.base, 'GET', '/context/mcp/servers')).json.servers[0];
    if (mcp.state === 'ready') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(mcp.state, 'ready', JSON.stringify(mcp));

  a.child.kill('SIGSTOP');  // A can no longer answer: B's forwarded decision waits for it
  try {
    const decision = api(b.base, 'POST', `/context/runs/${onA.json.run_id}/approvals/${asked.call_id}`, { decision: 'approve' })
      .catch((e) => ({ error: e }));
    // The forwarded decision is in the store, waiting for A's answer.
    const pending = () => spawnSync('psql', [readFileSync(urlFile, 'utf8').trim(), '-tAc',
      `SELECT count(*) FROM e2e_drain_${process.pid}.run_requests`], { encoding: 'utf8' }).stdout.trim();
    await until(() => pending() === '1', 5000);
    assert.equal(pending(), '1');
    const t0 = Date.now();
    b.child.kill('SIGTERM');
    const { code } = await b.exited;
    const took = Date.now() - t0;
    assert.equal(code, 0, b.output());
    assert.ok(took < 2000 + 1500, `exit took ${took} ms`);
    assert.doesNotMatch(b.output(), /exiting without waiting/);
    const answered = await decision;
    assert.ok(answered.error || answered.status === 503 || answered.status === 502 || answered.status === 409,
      JSON.stringify(answered.json ?? String(answered.error)));
  } finally {
    a.child.kill('SIGCONT');
  }
});

// Virtual keys on replicas behind one load balancer: a key made, changed or revoked on A holds on
// B within a second (the store's notification), with no restart.
test('a key made, changed and revoked on A holds on B within a second', { skip: !urlFile }, async () => {
  const fakePort = await startScriptedFake([]);
  const dsn = freshSchema('keys');
  const adminKey = 'admin-key-0123456789';
  const replica = (which) => writeConfig(`keys-${which}.yaml`, fakePort, `admin:
  api_key: ${adminKey}
context:
  store: {type: postgres, dsn: "${dsn}"}
  prompts_dir: ${PROMPTS}
`);
  const a = await startGateway(replica('a'));
  const b = await startGateway(replica('b'));
  const asAdmin = (base, method, path, body) => fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, json: await r.json() }));
  // A model request with `key` (the fake's canned answer when the key holds).
  const models = async (base, key, model = 'gpt-4o-mini') => (await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'x-fake-mode': 'echo' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  })).status;
  // Polls `check` until it holds, for at most a second.
  const within = async (check) => {
    const deadline = Date.now() + 1000;
    for (;;) {
      if (await check()) return true;
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const made = await asAdmin(a.base, 'POST', '/admin/keys', { name: 'shared', models: ['gpt-4o*'] });
  assert.equal(made.status, 201, JSON.stringify(made.json));
  const { key, id } = made.json;
  // Until B has a key at all it asks for none: any request passes. The key's model list is what
  // shows that B took it.
  assert.ok(await within(async () => (await models(b.base, key, 'o3')) === 403), 'B never took the new key');
  assert.equal(await models(b.base, key), 200);

  const changed = await asAdmin(a.base, 'PATCH', `/admin/keys/${id}`, { models: ['o3'] });
  assert.equal(changed.status, 200);
  assert.ok(await within(async () => (await models(b.base, key, 'o3')) === 200), 'B never took the change');
  // B's admin API lists the key as A changed it.
  const listed = await asAdmin(b.base, 'GET', '/admin/keys');
  assert.deepEqual(listed.json.data.find((k) => k.id === id)?.models, ['o3'], JSON.stringify(listed.json));

  const revoked = await asAdmin(a.base, 'DELETE', `/admin/keys/${id}`);
  assert.ok(revoked.status === 200 || revoked.status === 204, String(revoked.status));
  assert.ok(await within(async () => (await models(b.base, key, 'o3')) === 401), 'B still takes a revoked key');
  assert.ok(!(await asAdmin(b.base, 'GET', '/admin/keys')).json.data.some((k) => k.id === id));
});
