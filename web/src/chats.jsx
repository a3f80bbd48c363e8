// The chat list (search by title, delete) and the new-chat form.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, get, post } from './api.js';

export const chatTitle = (chat) => chat.title || 'Untitled chat';

// `waiting`: the ids of the chats whose run waits for an approval, marked in the list.
// `readOnly`: a viewer's list, with no chat to start or delete.
export function ChatList({ chats, waiting = new Set(), current, onChanged, readOnly }) {
  const [query, setQuery] = useState('');
  const [confirming, setConfirming] = useState(null);
  const [error, setError] = useState('');
  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    return chats.filter((c) => !q || chatTitle(c).toLowerCase().includes(q))
      .sort((a, b) => b.created_at - a.created_at);
  }, [chats, query]);

  const remove = async (chat) => {
    try {
      await api('DELETE', `/context/chats/${encodeURIComponent(chat.id)}`);
      setError('');
      if (current === chat.id) location.hash = '#/';
      onChanged();
    } catch (err) {
      setError(err.message);
    }
    setConfirming(null);
  };

  return (
    <div class="chat-list">
      {!readOnly && <a class="button primary new-chat" href="#/new">New chat</a>}
      <label class="visually-hidden" for="chat-search">Search chats by title</label>
      <input id="chat-search" type="search" placeholder="Search chats" value={query}
        onInput={(e) => setQuery(e.currentTarget.value)} />
      {error && <p class="error" role="alert">{error}</p>}
      <ul>
        {shown.map((chat) => (
          <li key={chat.id} class={chat.id === current ? 'current' : ''}>
            <a href={'#/chat/' + encodeURIComponent(chat.id)} aria-current={chat.id === current ? 'page' : undefined}>
              <span class="title">{chatTitle(chat)}</span>
              <span class="meta">{chat.model}{chat.edits === 'review' ? ' · review' : ''}</span>
              {waiting.has(chat.id) && <span class="badge awaiting">awaiting approval</span>}
            </a>
            {readOnly ? null : confirming === chat.id ? (
              <button type="button" class="danger small" onClick={() => remove(chat)}
                aria-label={`Confirm deleting ${chatTitle(chat)}`}>Delete?</button>
            ) : (
              <button type="button" class="small ghost" onClick={() => setConfirming(chat.id)}
                aria-label={`Delete ${chatTitle(chat)}`}>✕</button>
            )}
          </li>
        ))}
        {!shown.length && <li class="muted">{chats.length ? 'No chat matches.' : 'No chats yet.'}</li>}
      </ul>
    </div>
  );
}

export function NewChat({ onCreated }) {
  const [workspaces, setWorkspaces] = useState([]);
  const [models, setModels] = useState([]);
  const [prompts, setPrompts] = useState([]);
  const [form, setForm] = useState({ title: '', workspace: '', model: '', system_prompt: '', role: 'editor', edits: 'approve' });
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    get('/context/workspaces').then((r) => {
      setWorkspaces(r.data);
      if (r.data.length) setForm((f) => ({ ...f, workspace: f.workspace || r.data[0].path }));
    }).catch((err) => setError(err.message));
    get('/v1/system-prompts').then((r) => setPrompts(r.data)).catch(() => {});
    // /v1 goes upstream: asked without the console's key; an upstream that wants the client's
    // own key answers 401 and the model is typed in.
    get('/v1/models', { auth: false }).then((r) => {
      const ids = (r?.data ?? []).map((m) => m.id).filter(Boolean);
      setModels(ids);
      if (ids.length) setForm((f) => ({ ...f, model: f.model || ids[0] }));
    }).catch(() => {});
  }, []);

  const field = (name) => ({
    id: 'new-' + name,
    value: form[name],
    onInput: (e) => setForm({ ...form, [name]: e.currentTarget.value }),
  });

  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    const body = { model: form.model.trim(), role: form.role, edits: form.edits };
    if (form.title.trim()) body.title = form.title.trim();
    if (form.workspace) body.workspace = form.workspace;
    if (form.system_prompt) body.system_prompt = form.system_prompt;
    try {
      const chat = await post('/context/chats', body);
      onCreated(chat);
    } catch (err) {
      setError(err.message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel new-chat-form">
      <h1>New chat</h1>
      <form onSubmit={submit}>
        <label for="new-title">Title <span class="muted">(optional: the first message names it)</span></label>
        <input {...field('title')} maxLength={200} />
        <label for="new-workspace">Workspace</label>
        <select {...field('workspace')} onChange={(e) => setForm({ ...form, workspace: e.currentTarget.value })}>
          {workspaces.map((w) => <option key={w.path} value={w.path}>{w.path}</option>)}
          <option value="">No workspace (no file tools)</option>
        </select>
        <label for="new-model">Model</label>
        <input {...field('model')} list="new-models" required autocomplete="off" />
        <datalist id="new-models">{models.map((m) => <option key={m} value={m} />)}</datalist>
        <label for="new-system_prompt">System prompt</label>
        <select {...field('system_prompt')} onChange={(e) => setForm({ ...form, system_prompt: e.currentTarget.value })}>
          <option value="">The gateway's default</option>
          {prompts.map((p) => <option key={p.id} value={p.id}>{p.title || p.id}</option>)}
        </select>
        <fieldset>
          <legend>Role</legend>
          <label><input type="radio" name="role" value="editor" checked={form.role === 'editor'}
            onChange={() => setForm({ ...form, role: 'editor' })} /> Editor: reads and writes</label>
          <label><input type="radio" name="role" value="reader" checked={form.role === 'reader'}
            onChange={() => setForm({ ...form, role: 'reader' })} /> Reader: only reads</label>
        </fieldset>
        <fieldset>
          <legend>Edits</legend>
          <label><input type="radio" name="edits" value="approve" checked={form.edits === 'approve'}
            onChange={() => setForm({ ...form, edits: 'approve' })} /> Ask me before each write</label>
          <label><input type="radio" name="edits" value="review" checked={form.edits === 'review'}
            onChange={() => setForm({ ...form, edits: 'review' })} /> Record suggestions for review</label>
        </fieldset>
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary" disabled={busy}>Create chat</button>
      </form>
    </section>
  );
}
