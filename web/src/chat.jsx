// One chat: its messages, the run in progress (status line, steps, the answer as it is
// generated, the approval card), earlier runs' steps on request, and the chat's other panels.
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import { ApiError, api, get, post } from './api.js';
import { followRun } from './events.js';
import { applyEvent, initialRun, isLive } from './run.js';
import { ApprovalCard } from './approval.jsx';
import { ReviewPanel } from './review.jsx';
import { WorkflowPanel } from './workflows.jsx';
import { DocumentPanel } from './document.jsx';
import { chatTitle } from './chats.jsx';
import { renderMarkdown } from './markdown.js';

// An answer's Markdown, rendered again as streamed text arrives. markdown-it with HTML off
// escapes every tag of the text: the markup is its own.
export function Markdown({ text }) {
  const html = useMemo(() => renderMarkdown(typeof text === 'string' ? text : JSON.stringify(text, null, 2)), [text]);
  return <div class="content markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}

const runReducer = (state, action) => {
  if (action.type === 'reset') return initialRun(action.id);
  if (action.type === 'events') return action.events.reduce(applyEvent, state);
  return applyEvent(state, action.event);
};

const pretty = (value) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

function CallStep({ item }) {
  const result = item.result;
  const decision = item.decision;
  const outcome = !result ? (item.approval && !decision ? 'awaiting approval' : 'running')
    : result.ok ? 'ok' : result.errorCode || 'error';
  return (
    <li class={'step call ' + (result ? (result.ok ? 'ok' : 'failed') : 'open')} data-call-id={item.callId}>
      <details>
        <summary>
          <span class="tool">{item.tool}</span> <span class="phrase">{item.status}</span>{' '}
          <span class="badge">{outcome}</span>
          {decision && <span class="badge">{decision.decision === 'approve' ? (decision.scope === 'run' ? 'approved for this run' : 'approved') : 'rejected'}</span>}
        </summary>
        <h4>Parameters</h4>
        <pre>{pretty(item.parameters)}</pre>
        {decision?.parameters && (<><h4>Edited by the human</h4><pre>{pretty(decision.parameters)}</pre></>)}
        {decision?.feedback && (<><h4>Feedback</h4><p>{decision.feedback}</p></>)}
        {result && (<><h4>Result</h4><pre>{result.text}</pre></>)}
      </details>
    </li>
  );
}

export function Timeline({ run }) {
  if (!run.items.length) return null;
  return (
    <ol class="timeline" aria-label="Steps">
      {run.items.map((item) => {
        if (item.kind === 'call') return <CallStep key={item.key} item={item} />;
        if (item.kind === 'retry')
          return (
            <li key={item.key} class="step retry">
              <details>
                <summary>Asked the model again: <span class="badge">{item.reason}</span></summary>
                <p>{item.message}</p>
              </details>
            </li>
          );
        if (item.kind === 'workflow-step')
          return (
            <li key={item.key} class="step workflow-step">
              <span class="tool">Step {item.index}/{item.of}</span> {item.stepId} <span class="badge">{item.state}</span>
            </li>
          );
        return <li key={item.key} class="step note">{item.text}</li>;
      })}
    </ol>
  );
}

// An earlier run: a line with its outcome and, on request, its steps replayed from the store.
function PastRun({ run }) {
  const [state, dispatch] = useReducer(runReducer, initialRun(run.id));
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (!open) return undefined;
    dispatch({ type: 'reset', id: run.id });
    return followRun(run.id, { onEvent: (event) => dispatch({ event }) });
  }, [open, run.id]);
  const calls = run.tool_calls?.length ?? 0;
  return (
    <div class="past-run">
      <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? 'Hide steps' : `Show steps (${calls} tool call${calls === 1 ? '' : 's'}, ${run.status})`}
      </button>
      {open && <Timeline run={state} />}
      {run.status === 'failed' && run.error && <p class="error">{run.error}</p>}
    </div>
  );
}

function Composer({ disabled, onSend }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const send = async (e) => {
    e?.preventDefault();
    if (!text.trim() || busy) return;
    setBusy(true);
    const ok = await onSend(text);
    setBusy(false);
    if (ok) setText('');
  };
  return (
    <form class={'composer' + (disabled ? '' : ' ready')} onSubmit={send}>
      <label for="message" class="visually-hidden">Message</label>
      <textarea id="message" rows={3} value={text} placeholder={disabled ? 'The agent is working…' : 'Ask the agent (Ctrl+Enter sends)'}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send(e); }} />
      <button type="submit" class="primary" disabled={disabled || busy || !text.trim()}>Send</button>
    </form>
  );
}

// `readOnly`: a viewer's, who reads the chat and sends nothing to it.
export function ChatView({ chatId, onChanged, readOnly }) {
  const [chat, setChat] = useState(null);
  const [error, setError] = useState('');
  const [tab, setTab] = useState('chat');
  const [liveId, setLiveId] = useState(null);
  const [conn, setConn] = useState('');
  const [run, dispatch] = useReducer(runReducer, initialRun(null));
  const bottom = useRef(null);

  const load = useCallback(async () => {
    try {
      const body = await get(`/context/chats/${encodeURIComponent(chatId)}?limit=100`);
      setChat(body);
      setError('');
      if (body.live_run) setLiveId((id) => id ?? body.live_run);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 404 ? 'This chat does not exist (any more).' : err.message);
    }
  }, [chatId]);

  useEffect(() => { load(); }, [load]);

  // Follows the live run; once it ends the chat is read again (the answer is now a message).
  useEffect(() => {
    if (!liveId) return undefined;
    dispatch({ type: 'reset', id: liveId });
    const stop = followRun(liveId, {
      onEvent: (event) => dispatch({ event }),
      onState: (state, detail) => {
        setConn(state === 'reconnecting' ? 'Connection lost; reconnecting…' : state === 'error' ? detail : '');
        // The ended run is now in the chat: a message's run, or a workflow run of its own.
        if (state === 'ended') load().then(() => { setLiveId(null); onChanged(); });
      },
    });
    return stop;
  }, [liveId, load, onChanged]);

  useEffect(() => { bottom.current?.scrollIntoView?.({ block: 'end' }); }, [run.items.length, run.answer, chat?.messages?.length]);

  // The chat list marks chats waiting for an approval: it is told when this one starts or stops.
  const awaiting = run.status === 'awaiting_approval';
  const seenAwaiting = useRef(awaiting);
  useEffect(() => {
    if (seenAwaiting.current === awaiting) return;
    seenAwaiting.current = awaiting;
    onChanged();
  }, [awaiting, onChanged]);

  // The suggestions waiting in the Review tab: the hunks of the chat's open sessions.
  const [pending, setPending] = useState(0);
  const countPending = useCallback(async () => {
    try {
      const { data } = await get(`/context/chats/${encodeURIComponent(chatId)}/sessions`);
      const open = await Promise.all(data.filter((s) => s.status === 'open')
        .map((s) => get(`/context/sessions/${encodeURIComponent(s.id)}`)));
      setPending(open.reduce((n, s) => n + s.hunks.length, 0));
    } catch {
      // The count stays as it was; the Review tab says what failed.
    }
  }, [chatId]);
  useEffect(() => { countPending(); }, [countPending, run.sessionsChanged]);

  const send = async (content) => {
    try {
      const started = await post(`/context/chats/${encodeURIComponent(chatId)}/messages`, { content });
      setError('');
      setLiveId(started.run_id);
      // The message is stored before the run starts: read it back with the chat's new title.
      load();
      onChanged();
      return true;
    } catch (err) {
      setError(err.message);
      return false;
    }
  };

  const cancel = async () => {
    try {
      await post(`/context/runs/${encodeURIComponent(liveId)}/cancel`);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'run_ended')) setError(err.message);
    }
  };

  const setEdits = async (edits) => {
    try {
      setChat(await api('PATCH', `/context/chats/${encodeURIComponent(chatId)}`, { edits }).then((c) => ({ ...chat, ...c })));
    } catch (err) {
      setError(err.message);
    }
  };

  if (!chat) return error ? <p class="error" role="alert">{error}</p> : <p class="loading">Loading the chat…</p>;

  const live = liveId && isLive(run.status);
  const runsById = Object.fromEntries((chat.runs ?? []).map((r) => [r.id, r]));
  // Messages, and the runs no message names (workflow runs), in the order they happened.
  const named = new Set(chat.messages.map((m) => m.run_id));
  const entries = [...chat.messages, ...(chat.runs ?? []).filter((r) => !named.has(r.id) && r.id !== liveId)]
    .sort((x, y) => x.created_at - y.created_at);
  const shownRuns = new Set();
  const tabs = [['chat', 'Conversation'], ['review', 'Review'], ['workflows', 'Workflows'], ['document', 'Document']];

  return (
    <section class="chat" aria-labelledby="chat-title">
      <header class="chat-head">
        <a class="button small back" href="#/">Chats</a>
        <h1 id="chat-title">{chatTitle(chat)}</h1>
        {(chat.edits === 'review' || pending > 0) && (
          <p class="review-state">
            {chat.edits === 'review' && <span class="badge review-mode">Review mode: the agent's writes wait for you</span>}
            {pending > 0 && (
              <button type="button" class="link" onClick={() => setTab('review')}>
                {pending} suggestion{pending === 1 ? '' : 's'} to review
              </button>
            )}
          </p>
        )}
        <p class="meta">
          {chat.model} · {chat.workspace ?? 'no workspace'} · {chat.role} ·{' '}
          <label>edits{' '}
            <select value={chat.edits} onChange={(e) => setEdits(e.currentTarget.value)} aria-label="Edit mode">
              <option value="approve">ask before writing</option>
              <option value="review">record for review</option>
            </select>
          </label>
        </p>
        <div role="tablist" aria-label="Chat panels" class="tabs">
          {tabs.map(([id, label]) => (
            <button key={id} type="button" role="tab" id={'tab-' + id} aria-selected={tab === id}
              aria-controls={'panel-' + id} onClick={() => setTab(id)}>
              {label}{id === 'review' && pending > 0 && <span class="badge count">{pending}</span>}
            </button>
          ))}
        </div>
      </header>
      {error && <p class="error" role="alert">{error}</p>}

      <div role="tabpanel" id="panel-chat" aria-labelledby="tab-chat" hidden={tab !== 'chat'} class="conversation">
        {chat.has_more && <p class="muted">Older messages are not shown.</p>}
        <ol class="messages" aria-label="Conversation">
          {entries.map((m) => {
            if (m.object === 'run')
              return (
                <li key={m.id} class="message workflow-run">
                  <span class="who">Workflow run</span>
                  {m.output && <Markdown text={m.output} />}
                  <PastRun run={m} />
                </li>
              );
            // A run's steps go under its first message (the user's; a workflow's answer).
            const past = runsById[m.run_id] && m.run_id !== liveId && !shownRuns.has(m.run_id);
            if (past) shownRuns.add(m.run_id);
            return (
              <li key={m.id} class={'message ' + m.role}>
                <span class="who">{m.role === 'user' ? 'You' : 'Agent'}</span>
                {m.role === 'user' ? <div class="content">{m.content}</div> : <Markdown text={m.content} />}
                {past && <PastRun run={runsById[m.run_id]} />}
              </li>
            );
          })}
        </ol>
        {liveId && (
          <div class="live-run" aria-busy={live ? 'true' : 'false'} data-run-id={liveId} data-last-event={run.lastId}>
            <p class="status-line" role="status" aria-live="polite">
              <span class="phrase">{run.statusLine || 'Starting'}</span>
              {run.maxSteps > 0 && <span class="step-count">step {run.step}/{run.maxSteps}</span>}
              {conn && <span class="conn">{conn}</span>}
              {live && <button type="button" class="small danger" onClick={cancel}>Cancel</button>}
            </p>
            <Timeline run={run} />
            {run.pending && <ApprovalCard key={run.pending.call_id} runId={liveId} approval={run.pending} />}
            {run.answer && <div class="message assistant streaming"><span class="who">Agent</span><Markdown text={run.answer} /></div>}
            {run.status === 'failed' && <p class="error" role="alert">{run.error}</p>}
          </div>
        )}
        <div ref={bottom} />
        {!readOnly && <Composer disabled={!!live} onSend={send} />}
      </div>
      <div role="tabpanel" id="panel-review" aria-labelledby="tab-review" hidden={tab !== 'review'}>
        {tab === 'review' && <ReviewPanel chatId={chatId} changed={run.sessionsChanged} onChanged={countPending} />}
      </div>
      <div role="tabpanel" id="panel-workflows" aria-labelledby="tab-workflows" hidden={tab !== 'workflows'}>
        {tab === 'workflows' && (
          <WorkflowPanel chatId={chatId} busy={!!live}
            onStarted={(runId) => { setLiveId(runId); setTab('chat'); }} />
        )}
      </div>
      <div role="tabpanel" id="panel-document" aria-labelledby="tab-document" hidden={tab !== 'document'}>
        <DocumentPanel chatId={chatId} update={run.document} visible={tab === 'document'} />
      </div>
    </section>
  );
}
