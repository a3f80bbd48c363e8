// The console's pure pieces: the SSE parser and the run reducer that makes a resumed stream
// show every step once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sseParser } from '../src/sse.js';
import { applyEvent, initialRun } from '../src/run.js';

test('SSE frames split anywhere, CRLF or LF, comments and multi-line data', () => {
  const seen = [];
  const feed = sseParser((e) => seen.push(e));
  const text = ': keep-alive\r\n\r\nid: 1\r\nevent: tool.call\r\ndata: {"a":\r\ndata: 1}\r\n\r\nid: 2\ndata: x\n\n';
  for (const ch of text) feed(ch);
  assert.deepEqual(seen, [
    { id: '1', event: 'tool.call', data: '{"a":\n1}' },
    { id: '2', event: 'message', data: 'x' },
  ]);
});

const events = [
  { id: 1, type: 'run.started', step: 0, max_steps: 10, content: 'hi' },
  { id: 2, type: 'tool.call', step: 1, max_steps: 10, call_id: 'c1', tool: 'read_file', parameters: { path: 'a' }, status: 'Reading a' },
  { id: 3, type: 'tool.result', step: 1, call_id: 'c1', ok: true, text: 'x' },
  { id: 4, type: 'tool.call', step: 2, call_id: 'c2', tool: 'edit_file', parameters: {}, status: 'Editing a' },
  { id: 5, type: 'approval.required', step: 2, call_id: 'c2', tool: 'edit_file', preview: '--- a/a', summary: 's' },
  { id: 6, type: 'approval.resolved', step: 2, call_id: 'c2', decision: 'approve', scope: 'once' },
  { id: 7, type: 'tool.result', step: 2, call_id: 'c2', ok: true, text: 'ok' },
  { id: 8, type: 'message.delta', step: 3, text: 'Do' },
  { id: 9, type: 'message.delta', step: 3, text: 'ne' },
  { id: 10, type: 'message', step: 3, content: 'Done' },
  { id: 11, type: 'run.completed', step: 3, output: 'Done' },
];

test('a replay after a cut applies each event once', () => {
  const straight = events.reduce(applyEvent, initialRun('r'));
  // Cut after event 5, resumed with Last-Event-ID 3 (an older id, as after a reload): 4 and 5
  // arrive again.
  const resumed = [...events.slice(0, 5), ...events.slice(3)].reduce(applyEvent, initialRun('r'));
  assert.deepEqual(resumed, straight);
  assert.deepEqual(straight.items.map((i) => i.callId), ['c1', 'c2']);
  assert.equal(straight.answer, 'Done');
  assert.equal(straight.status, 'completed');
  assert.equal(straight.pending, null);
  assert.equal(straight.items[1].decision.decision, 'approve');
});

test('an approval is pending until it is resolved; the status line follows the steps', () => {
  const waiting = events.slice(0, 5).reduce(applyEvent, initialRun('r'));
  assert.equal(waiting.status, 'awaiting_approval');
  assert.equal(waiting.pending.call_id, 'c2');
  assert.equal(waiting.step, 2);
  assert.equal(waiting.maxSteps, 10);
  assert.match(waiting.statusLine, /approval/);
  const streaming = events.slice(0, 9).reduce(applyEvent, initialRun('r'));
  assert.equal(streaming.answer, 'Done');
  const reset = applyEvent(streaming, { id: 10, type: 'message.reset' });
  assert.equal(reset.answer, '');
});
