// The state of one run as its events arrive: the timeline of steps, the pending approval, the
// answer being generated, the status line. `applyEvent` is pure and idempotent by event id: an
// event at or below the last id applied is ignored, so a resumed stream never repeats a step.

export const FINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

export function initialRun(id) {
  return {
    id,
    lastId: 0,
    status: 'running',
    step: 0,
    maxSteps: 0,
    statusLine: '',
    input: '',
    items: [], // {kind: 'call' | 'retry' | 'note' | 'workflow-step', key, ...}
    pending: null, // the approval.required event awaiting a decision
    answer: '', // the final answer as it is generated, then as given
    output: null,
    error: null,
    sessionsChanged: 0, // counts session.updated / session.resolved events
    document: null, // the newest document.updated event
  };
}

const updateCall = (items, callId, change) => {
  const at = items.findIndex((i) => i.kind === 'call' && i.callId === callId);
  if (at < 0) return items;
  const copy = items.slice();
  copy[at] = { ...copy[at], ...change(copy[at]) };
  return copy;
};

const ensureCall = (items, event) =>
  items.some((i) => i.kind === 'call' && i.callId === event.call_id)
    ? items
    : [...items, { kind: 'call', key: 'call:' + event.call_id, callId: event.call_id, tool: event.tool,
      parameters: event.parameters, status: event.status ?? '' }];

export function applyEvent(run, event) {
  const id = Number(event.id);
  if (!(id > run.lastId)) return run;
  const next = { ...run, lastId: id };
  if (event.step !== undefined) next.step = event.step;
  if (event.max_steps !== undefined) next.maxSteps = event.max_steps;
  switch (event.type) {
    case 'run.started':
      next.input = event.content ?? '';
      next.statusLine = 'Started';
      break;
    case 'model.requested':
      next.statusLine = event.attempt > 1 ? `Asking the model again (attempt ${event.attempt})` : 'Thinking';
      break;
    case 'model.retry':
      next.items = [...run.items, { kind: 'retry', key: 'retry:' + id, reason: event.reason,
        message: event.message, attempt: event.attempt }];
      break;
    case 'message.delta':
      next.answer = run.answer + (event.text ?? '');
      break;
    case 'message.reset':
      next.answer = '';
      break;
    case 'tool.call':
      next.items = ensureCall(run.items, event);
      next.statusLine = event.status || `Running ${event.tool}`;
      next.answer = '';
      break;
    case 'model.salvaged':
      next.items = [...run.items, { kind: 'note', key: 'note:' + id, text: `The model wrote a ${event.tool} call as text; it was run.` }];
      break;
    case 'approval.required':
      next.items = updateCall(ensureCall(run.items, event), event.call_id, () => ({ approval: event }));
      next.pending = event;
      next.status = 'awaiting_approval';
      next.statusLine = `Waiting for your approval: ${event.tool}`;
      break;
    case 'approval.resolved':
      next.items = updateCall(run.items, event.call_id, () => ({ decision: event }));
      if (run.pending?.call_id === event.call_id) next.pending = null;
      if (run.status === 'awaiting_approval') next.status = 'running';
      break;
    case 'tool.result':
      next.items = updateCall(run.items, event.call_id, () => ({
        result: { ok: event.ok, errorCode: event.error_code, text: event.text, data: event.data },
      }));
      break;
    case 'message':
      next.answer = event.content ?? '';
      break;
    case 'step.started':
      next.items = [...run.items, { kind: 'workflow-step', key: 'wstep:' + id, stepId: event.step_id,
        index: event.index, of: event.of, state: 'started' }];
      next.statusLine = `Workflow step ${event.index}/${event.of}: ${event.step_id}`;
      break;
    case 'step.completed':
    case 'step.skipped': {
      const items = run.items.slice();
      const at = items.findLastIndex((i) => i.kind === 'workflow-step' && i.stepId === event.step_id);
      if (at >= 0) items[at] = { ...items[at], state: event.type === 'step.completed' ? 'completed' : 'skipped', output: event.output };
      next.items = items;
      break;
    }
    case 'workflow.parameters':
      next.items = [...run.items, { kind: 'note', key: 'note:' + id, text: 'Parameters read from your text: ' + JSON.stringify(event.parameters) }];
      break;
    case 'context.trimmed':
      next.items = [...run.items, { kind: 'note', key: 'note:' + id, text: `${event.left_out_messages} earlier messages were left out to fit the model's context.` }];
      break;
    case 'write.undone':
      next.items = [...run.items, { kind: 'note', key: 'note:' + id, text: `Undone: ${event.path ?? 'the document'}` }];
      break;
    case 'document.updated':
      next.document = event;
      break;
    case 'session.updated':
    case 'session.resolved':
      next.sessionsChanged = run.sessionsChanged + 1;
      if (event.type === 'session.updated')
        next.items = updateCall(run.items, event.call_id, () => ({ recorded: event.session_id }));
      break;
    case 'run.completed':
      next.status = 'completed';
      next.output = event.output ?? null;
      next.pending = null;
      next.statusLine = 'Done';
      break;
    case 'run.failed':
      next.status = 'failed';
      next.error = event.error ?? 'The run failed.';
      next.pending = null;
      next.statusLine = 'Failed';
      break;
    case 'run.cancelled':
      next.status = 'cancelled';
      next.pending = null;
      next.statusLine = 'Cancelled';
      break;
    default:
      break;
  }
  return next;
}

export const isLive = (status) => status === 'running' || status === 'awaiting_approval';
