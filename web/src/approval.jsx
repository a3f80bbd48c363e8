// The approval card: the call and its diff, approve, approve for this run, reject with feedback,
// and edit before approving (the edited parameters go with the decision). A decision made
// elsewhere (another tab, another client) shows its outcome instead of an error.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, post } from './api.js';
import { Diff, DiffModeToggle } from './diff.jsx';

const isTyping = (el) => el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);

// The parameters as fields: strings as text (a text area when long or multi-line), the rest as
// JSON. Returns the parameters object, or throws with the field that is not valid JSON.
function ParameterEditor({ values, setValues }) {
  return (
    <div class="param-editor">
      {Object.entries(values).map(([name, value]) => {
        const id = 'param-' + name;
        const text = value.text;
        const long = !value.json && (text.includes('\n') || text.length > 60);
        const onInput = (e) => setValues({ ...values, [name]: { ...value, text: e.currentTarget.value } });
        return (
          <div key={name} class="field">
            <label for={id}>{name}{value.json ? ' (JSON)' : ''}</label>
            {long || value.json
              ? <textarea id={id} rows={Math.min(16, text.split('\n').length + 1)} value={text} onInput={onInput} spellcheck={false} />
              : <input id={id} value={text} onInput={onInput} spellcheck={false} />}
          </div>
        );
      })}
    </div>
  );
}

const toFields = (parameters) => Object.fromEntries(Object.entries(parameters ?? {}).map(([k, v]) =>
  [k, typeof v === 'string' ? { json: false, text: v } : { json: true, text: JSON.stringify(v, null, 2) }]));

const fromFields = (fields) => Object.fromEntries(Object.entries(fields).map(([k, v]) => {
  if (!v.json) return [k, v.text];
  try {
    return [k, JSON.parse(v.text)];
  } catch {
    throw new Error(`\`${k}\` is not valid JSON.`);
  }
}));

export function ApprovalCard({ runId, approval }) {
  const [mode, setMode] = useState(() => (window.innerWidth >= 1100 ? 'side-by-side' : 'line-by-line'));
  const [preview, setPreview] = useState(approval.preview ?? '');
  const [editing, setEditing] = useState(false);
  const [fields, setFields] = useState(() => toFields(approval.parameters));
  const [rejecting, setRejecting] = useState(false);
  const [feedback, setFeedback] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [elsewhere, setElsewhere] = useState(null);
  const card = useRef(null);
  const feedbackBox = useRef(null);

  // A cut preview or parameters: the call's own resource has them whole.
  useEffect(() => {
    if (!approval.truncated?.length) return;
    get(`/context/runs/${encodeURIComponent(runId)}/calls/${encodeURIComponent(approval.call_id)}`)
      .then((call) => {
        if (call.preview) setPreview(call.preview);
        if (call.parameters && typeof call.parameters === 'object') setFields(toFields(call.parameters));
      }).catch(() => {});
  }, [runId, approval]);

  const decide = async (body) => {
    setBusy(true);
    setError('');
    try {
      await post(`/context/runs/${encodeURIComponent(runId)}/approvals/${encodeURIComponent(approval.call_id)}`, body);
    } catch (err) {
      if (err instanceof ApiError && (err.code === 'call_not_pending' || err.code === 'run_ended')) {
        const call = await get(`/context/runs/${encodeURIComponent(runId)}/calls/${encodeURIComponent(approval.call_id)}`).catch(() => null);
        setElsewhere(call?.status ?? 'decided');
      } else {
        setError(err.message);
      }
    } finally {
      setBusy(false);
    }
  };
  const approve = (scope = 'once') => {
    const body = { decision: 'approve', scope };
    if (editing) {
      try {
        body.parameters = fromFields(fields);
      } catch (err) {
        setError(err.message);
        return;
      }
    }
    decide(body);
  };
  const reject = (e) => {
    e?.preventDefault();
    decide(feedback.trim() ? { decision: 'reject', feedback: feedback.trim() } : { decision: 'reject' });
  };
  const startRejecting = () => {
    setRejecting(true);
    setTimeout(() => feedbackBox.current?.focus(), 0);
  };

  // Shortcuts while no text field has the focus: a approve, Shift+A approve for this run,
  // r reject (opens the feedback box).
  useEffect(() => {
    const onKey = (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey || isTyping(document.activeElement) || busy || elsewhere) return;
      if (e.key === 'a') { e.preventDefault(); approve('once'); }
      else if (e.key === 'A') { e.preventDefault(); approve('run'); }
      else if (e.key === 'r') { e.preventDefault(); startRejecting(); }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  // Focused for the shortcuts without the browser's own scroll (which shows the card's top and
  // may push its buttons below the fold, racing the chat's scroll to the end); then the buttons,
  // the card's end, are brought into view, and again when the diff's layout changes its height
  // (inline is taller than side by side: the buttons went below the fold).
  const actions = useRef(null);
  useEffect(() => { card.current?.focus({ preventScroll: true }); }, []);
  useEffect(() => { actions.current?.scrollIntoView?.({ block: 'nearest' }); }, [mode]);

  return (
    <section class="approval" ref={card} tabIndex={-1} aria-labelledby={'approval-' + approval.call_id}
      data-call-id={approval.call_id}>
      <h2 id={'approval-' + approval.call_id}>Approve <code>{approval.tool}</code>?</h2>
      {approval.reason === 'interrupted' && <p class="warning">The gateway stopped while this write was running and the target changed since; look again.</p>}
      {approval.summary && <p class="summary">{approval.summary.split(/\n--- /)[0]}</p>}
      {preview && (
        <>
          <DiffModeToggle mode={mode} setMode={setMode} />
          <Diff diff={preview} mode={mode} label={`Changes ${approval.tool} would make`} />
        </>
      )}
      {elsewhere ? (
        <p class="outcome" role="status">Already decided elsewhere: {elsewhere}.</p>
      ) : (
        <>
          {editing && (
            <div class="edit-box">
              <h3>Edit before approving</h3>
              <ParameterEditor values={fields} setValues={setFields} />
            </div>
          )}
          {rejecting && (
            <form class="reject-box" onSubmit={reject}>
              <label for={'feedback-' + approval.call_id}>Tell the agent why (optional)</label>
              <textarea id={'feedback-' + approval.call_id} ref={feedbackBox} rows={2} value={feedback}
                onInput={(e) => setFeedback(e.currentTarget.value)}
                onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) reject(e); }} />
              <button type="submit" class="danger" disabled={busy}>Reject</button>
              <button type="button" class="ghost" onClick={() => setRejecting(false)}>Back</button>
            </form>
          )}
          {error && <p class="error" role="alert">{error}</p>}
          {!rejecting && (
            <div class="actions" ref={actions}>
              <button type="button" class="primary" disabled={busy} onClick={() => approve('once')} aria-keyshortcuts="a">
                {editing ? 'Approve edited' : 'Approve'} <kbd>a</kbd>
              </button>
              <button type="button" disabled={busy} onClick={() => approve('run')} aria-keyshortcuts="Shift+A">
                Approve for this run <kbd>A</kbd>
              </button>
              <button type="button" class="danger" disabled={busy} onClick={startRejecting} aria-keyshortcuts="r">
                Reject… <kbd>r</kbd>
              </button>
              <button type="button" class="ghost" aria-pressed={editing} onClick={() => setEditing(!editing)}>
                {editing ? 'Cancel editing' : 'Edit before approving'}
              </button>
            </div>
          )}
        </>
      )}
    </section>
  );
}
