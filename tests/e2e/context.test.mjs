// The Context API beyond the README's demo (whose blocks tests/docs runs as written): the real
// gateway binary, the scripted fake model as a process, a workspace on disk, SSE read with fetch,
// a key, a SIGKILL while a run awaits approval and the events resumed after it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROMPTS, api as apiAs, dir, runEvents, startGateway, startScriptedFake, until, writeConfig } from './support.mjs';

const KEY = 'e2e-context-key-0123456789';
const call = (tool, parameters) => JSON.stringify({ tool, parameters, terminate: false });
const api = (base, method, path, body) => apiAs(base, method, path, body, { key: KEY });
const events = (base, runId, options) => runEvents(base, runId, { ...options, key: KEY });

test('fix a typo with approval, surviving a SIGKILL while the run waits', async () => {
  const workspace = join(dir, 'project');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'README.md'), '# Demo\n\nThis is teh readme.\n');
  const fakePort = await startScriptedFake([
    call('search_files', { pattern: 'teh' }),
    call('read_file', { path: 'README.md' }),
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'the' }),
    'Fixed the typo on line 3 of README.md.',
  ]);
  const config = writeConfig('context.yaml', fakePort, `context:
  data_dir: ${join(dir, 'context-data')}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
  api_keys: ["${KEY}"]
`);
  let gw = await startGateway(config);

  const denied = await fetch(`${gw.base}/context/chats`);
  assert.equal(denied.status, 401);
  assert.equal((await denied.json()).error.type, 'authentication_error');

  const chat = await api(gw.base, 'POST', '/context/chats', { model: 'gpt-test', workspace });
  assert.equal(chat.status, 201);
  const started = await api(gw.base, 'POST', `/context/chats/${chat.json.id}/messages`,
    { content: "fix the typo 'teh' in README.md" });
  assert.equal(started.status, 202);
  const runId = started.json.run_id;

  const before = await events(gw.base, runId, { stop: (e) => e.type === 'approval.required' });
  const approval = before.at(-1);
  assert.equal(approval.type, 'approval.required');
  assert.equal(approval.tool, 'replace_in_file');
  assert.match(approval.preview, /\+This is the readme\./);
  assert.equal(readFileSync(join(workspace, 'README.md'), 'utf8'), '# Demo\n\nThis is teh readme.\n');

  // The gateway dies without warning, then comes back on the same data_dir.
  gw.child.kill('SIGKILL');
  await gw.exited;
  gw = await startGateway(config);
  const waiting = await api(gw.base, 'GET', `/context/runs/${runId}`);
  assert.equal(waiting.json.status, 'awaiting_approval');
  assert.equal(waiting.json.pending_approval.id, approval.call_id);

  const decided = await api(gw.base, 'POST',
    `/context/runs/${runId}/approvals/${approval.call_id}`, { decision: 'approve' });
  assert.equal(decided.status, 200);
  const rest = await events(gw.base, runId, { lastEventId: approval.id });
  assert.equal(rest[0].id, approval.id + 1);
  assert.deepEqual(rest.map((e) => e.type),
    ['approval.resolved', 'tool.result', 'model.requested', 'message.delta', 'message.delta',
      'model.replied', 'message', 'run.completed']);
  // The answer streamed as the model generated it, then came whole.
  assert.equal(rest[3].text + rest[4].text, rest[6].content);
  assert.equal(rest.at(-1).output, 'Fixed the typo on line 3 of README.md.');
  assert.equal(readFileSync(join(workspace, 'README.md'), 'utf8'), '# Demo\n\nThis is the readme.\n');

  const done = await api(gw.base, 'GET', `/context/runs/${runId}`);
  assert.equal(done.json.status, 'completed');
  assert.equal(done.json.tool_calls.length, 3);
});

test('SIGHUP reloads the workflows and keeps them when an edit breaks one', async () => {
  const workflows = join(dir, 'workflows');
  cpSync(new URL('../../workflows', import.meta.url), workflows, { recursive: true });
  const config = writeConfig('workflows.yaml', 9, `context:
  data_dir: ${join(dir, 'workflows-data')}
  prompts_dir: ${PROMPTS}
  workflows_dir: ${workflows}
  api_keys: ["${KEY}"]
`);
  const gw = await startGateway(config);
  appendFileSync(join(workflows, 'explain_file.yaml'), '  - id: broken\n    tool: no_such_tool\n');
  gw.child.kill('SIGHUP');
  await until(() => /workflows not reloaded/.test(gw.output()), 5000);
  assert.match(gw.output(), /explain_file\.yaml:\d+: step `broken`: unknown tool `no_such_tool`/);
  const kept = await api(gw.base, 'GET', '/context/workflows/explain_file');
  assert.equal(kept.status, 200);
  assert.equal(kept.json.steps.length, 2);

  writeFileSync(join(workflows, 'explain_file.yaml'),
    readFileSync(new URL('../../workflows/explain_file.yaml', import.meta.url)));
  writeFileSync(join(workflows, 'extra.yaml'),
    'id: extra\nname: Extra\ndescription: d\ncategory: Misc\nsteps:\n  - id: a\n    prompt: hello\n');
  gw.child.kill('SIGHUP');
  await until(() => /workflows reloaded: 7 loaded/.test(gw.output()), 5000);
  const added = await api(gw.base, 'GET', '/context/workflows/extra');
  assert.equal(added.status, 200);
  assert.equal(added.json.category, 'Misc');
});
