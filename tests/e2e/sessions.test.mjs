// Review mode through HTTP on a real gateway process: the agent's edits are recorded as edit
// sessions (the disk untouched), survive a SIGKILL right after an edit was recorded (without
// being recorded twice), and are accepted hunk by hunk or rejected by the human.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROMPTS, api, dir, runEvents, startGateway, startScriptedFake, writeConfig } from './support.mjs';

const call = (tool, parameters) => JSON.stringify({ tool, parameters, terminate: false });
const numbered = () => Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join('');

test('review mode: recorded, killed, resumed once, accepted hunk by hunk', async () => {
  const workspace = join(dir, 'sessions-ws');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'list.txt'), numbered());
  const fakePort = await startScriptedFake([
    // Not idempotent: recorded twice, it would append twice.
    call('append_file', { path: 'list.txt', content: 'line 21\n' }),
    call('doc_edit', { command: 'str_replace', path: '/list.txt', old_str: 'line 2\n', new_str: 'line two\n' }),
    call('read_file', { path: 'list.txt' }),
    'Two suggestions await review.',
  ]);
  const config = writeConfig('sessions.yaml', fakePort, `context:
  data_dir: ${join(dir, 'sessions-data')}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
`);
  // Killed right after the first edit is recorded, before the call's result is stored.
  let gw = await startGateway(config, 'session.after_record');
  const chat = await api(gw.base, 'POST', '/context/chats', { model: 'm', workspace, edits: 'review' });
  assert.equal(chat.status, 201);
  assert.equal(chat.json.edits, 'review');
  // The run may reach the kill before the 202 is written: then the run is found after restart.
  let runId;
  try {
    const started = await api(gw.base, 'POST', `/context/chats/${chat.json.id}/messages`, { content: 'spell out two numbers' });
    runId = started.json.run_id;
  } catch {
    runId = undefined;
  }
  const { signal } = await gw.exited;
  assert.equal(signal, 'SIGKILL', gw.output());

  gw = await startGateway(config);
  if (!runId) {
    const seen = await api(gw.base, 'GET', `/context/chats/${chat.json.id}`);
    runId = seen.json.live_run ?? seen.json.runs.at(-1)?.id;
  }
  assert.ok(runId);
  const all = await runEvents(gw.base, runId);
  assert.equal(all.at(-1).type, 'run.completed', JSON.stringify(all.at(-1)));
  assert.equal(all.filter((e) => e.type === 'approval.required').length, 0);
  const read = all.filter((e) => e.type === 'tool.result').at(-1);
  assert.match(read.text, /line two/);
  assert.equal(read.text.match(/line 21/g).length, 1, read.text);
  assert.equal(readFileSync(join(workspace, 'list.txt'), 'utf8'), numbered());

  const listed = await api(gw.base, 'GET', `/context/chats/${chat.json.id}/sessions`);
  assert.equal(listed.json.data.length, 1);
  const sessionId = listed.json.data[0].id;
  const shown = await api(gw.base, 'GET', `/context/sessions/${sessionId}`);
  // Two edits, not three: the resumed call found its edit recorded.
  assert.equal(shown.json.edits.length, 2);
  assert.equal(shown.json.changed_on_disk, false);
  assert.equal(shown.json.hunks.length, 2);
  assert.equal(shown.json.ai_version, numbered().replace('line 2\n', 'line two\n') + 'line 21\n');
  const [first, second] = shown.json.hunks.map((h) => h.id);

  const one = await api(gw.base, 'POST', `/context/sessions/${sessionId}/accept`, { hunks: [first] });
  assert.equal(one.status, 200, JSON.stringify(one.json));
  assert.equal(readFileSync(join(workspace, 'list.txt'), 'utf8'), numbered().replace('line 2\n', 'line two\n'));
  const rejected = await api(gw.base, 'POST', `/context/sessions/${sessionId}/reject`);
  assert.equal(rejected.status, 200);
  assert.equal(readFileSync(join(workspace, 'list.txt'), 'utf8'), numbered().replace('line 2\n', 'line two\n'));
  const again = await api(gw.base, 'POST', `/context/sessions/${sessionId}/accept`, { hunks: [second] });
  assert.equal(again.status, 409);
  assert.equal(again.json.error.code, 'session_resolved');

  const resolved = (await runEvents(gw.base, runId, { lastEventId: all.at(-1).id })).filter((e) => e.type === 'session.resolved');
  assert.deepEqual(resolved.map((e) => e.status), ['open', 'rejected']);
});
