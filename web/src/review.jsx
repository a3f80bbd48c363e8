// Review mode: the chat's open edit sessions, each a file (or the document) with its hunks;
// the human accepts the selected hunks, all of them, or rejects the session.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, get, post } from './api.js';
import { Diff, DiffModeToggle, withHeaders } from './diff.jsx';

function Session({ id, onResolved }) {
  const [session, setSession] = useState(null);
  const [selected, setSelected] = useState({});
  const [mode, setMode] = useState('line-by-line');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const s = await get(`/context/sessions/${encodeURIComponent(id)}`);
      setSession(s);
      setSelected((old) => Object.fromEntries(s.hunks.map((h) => [h.id, old[h.id] ?? true])));
    } catch (err) {
      setError(err.message);
    }
  }, [id]);
  useEffect(() => { load(); }, [load]);

  const act = async (path, body) => {
    setBusy(true);
    setError('');
    try {
      await post(`/context/sessions/${encodeURIComponent(id)}/${path}`, body);
      await load();
      onResolved();
    } catch (err) {
      if (err instanceof ApiError && err.code === 'merge_conflict')
        setError('The file changed on disk where these hunks change it: ' + err.message);
      else setError(err.message);
      await load();
    } finally {
      setBusy(false);
    }
  };

  if (!session) return error ? <p class="error">{error}</p> : <p class="loading">Loading…</p>;
  const target = session.kind === 'file' ? session.path : `document “${session.document}”`;
  const chosen = session.hunks.filter((h) => selected[h.id]).map((h) => h.id);
  return (
    <article class="session" data-session-id={id} aria-labelledby={'session-' + id}>
      <h3 id={'session-' + id}>{target} <span class="badge">{session.status}</span></h3>
      <p class="meta">{session.edits.length} edit{session.edits.length === 1 ? '' : 's'} by the agent
        {session.changed_on_disk && ' · changed on disk since: accepting merges with it'}</p>
      <DiffModeToggle mode={mode} setMode={setMode} />
      <ul class="hunks">
        {session.hunks.map((h) => (
          <li key={h.id} class="hunk">
            <label>
              <input type="checkbox" checked={!!selected[h.id]} disabled={session.status !== 'open'}
                onChange={(e) => setSelected({ ...selected, [h.id]: e.currentTarget.checked })} />
              {' '}Lines {h.new_start}–{h.new_start + Math.max(h.new_lines, 1) - 1}: +{h.added} −{h.removed}
            </label>
            <Diff diff={withHeaders(h.diff, session.kind === 'file' ? session.path : session.document)} mode={mode}
              label={`Hunk at line ${h.new_start}`} />
          </li>
        ))}
      </ul>
      {error && <p class="error" role="alert">{error}</p>}
      {session.status === 'open' && (
        <div class="actions">
          <button type="button" class="primary" disabled={busy || !chosen.length}
            onClick={() => act('accept', { hunks: chosen })}>Accept selected ({chosen.length})</button>
          <button type="button" disabled={busy} onClick={() => act('accept', {})}>Accept all</button>
          <button type="button" class="danger" disabled={busy} onClick={() => act('reject', {})}>Reject</button>
        </div>
      )}
    </article>
  );
}

// `onChanged`: told after a session was accepted or rejected (the chat's pending count).
export function ReviewPanel({ chatId, changed, onChanged }) {
  const [sessions, setSessions] = useState(null);
  const [error, setError] = useState('');
  const load = useCallback(() => get(`/context/chats/${encodeURIComponent(chatId)}/sessions`)
    .then((r) => { setSessions(r.data); setError(''); })
    .catch((err) => setError(err.message)), [chatId]);
  const afterResolving = useCallback(() => { load(); onChanged?.(); }, [load, onChanged]);
  useEffect(() => { load(); }, [load, changed]);

  if (!sessions) return error ? <p class="error">{error}</p> : <p class="loading">Loading…</p>;
  const open = sessions.filter((s) => s.status === 'open');
  const resolved = sessions.filter((s) => s.status !== 'open');
  return (
    <section class="panel review">
      <h2>Suggestions to review</h2>
      {error && <p class="error" role="alert">{error}</p>}
      {!open.length && <p class="muted">Nothing awaits review. In a chat whose edits are recorded for review, the agent's writes appear here.</p>}
      {open.map((s) => <Session key={s.id + ':' + s.updated_at} id={s.id} onResolved={afterResolving} />)}
      {resolved.length > 0 && (
        <details>
          <summary>Resolved ({resolved.length})</summary>
          <ul>{resolved.map((s) => <li key={s.id}>{s.path || s.document}: {s.status}</li>)}</ul>
        </details>
      )}
    </section>
  );
}
