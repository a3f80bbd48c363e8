// The chat's document: the text the document tools work on. The human edits and saves it
// (conditionally on the version read); the agent's edits arrive live from the run's events and
// replace the text unless the human has unsaved changes, which are never overwritten.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, get } from './api.js';

export function DocumentPanel({ chatId, update, visible }) {
  const [doc, setDoc] = useState(null); // {name, content, version} | 'none'
  const [text, setText] = useState('');
  const [name, setName] = useState('notes.md');
  const [notice, setNotice] = useState('');
  const [error, setError] = useState('');
  const dirty = doc && doc !== 'none' && text !== doc.content;

  const load = () => get(`/context/chats/${encodeURIComponent(chatId)}/document`)
    .then((d) => { setDoc(d); setText(d.content); setName(d.name); setNotice(''); })
    .catch((err) => (err instanceof ApiError && err.status === 404 ? setDoc('none') : setError(err.message)));
  useEffect(() => { load(); }, [chatId]);

  // An agent edit.
  useEffect(() => {
    if (!update || !doc || (doc !== 'none' && update.version <= doc.version)) return;
    if (update.truncated?.length) { if (!dirty) load(); else setNotice('The agent changed the document.'); return; }
    const next = { name: update.name, content: update.content, version: update.version };
    if (dirty) setNotice(`The agent changed the document (version ${update.version}); your unsaved text is kept.`);
    else { setDoc(next); setText(next.content); setName(next.name); }
  }, [update]);

  const save = async () => {
    try {
      const body = { name, content: text };
      if (doc !== 'none') body.base_version = doc.version;
      const written = await api('PUT', `/context/chats/${encodeURIComponent(chatId)}/document`, body);
      setDoc({ name, content: text, version: written.version });
      setNotice('');
      setError('');
    } catch (err) {
      if (err instanceof ApiError && err.code === 'version_conflict')
        setError('The document changed since you opened it (an agent edit or another tab). Load the current one to continue; copy your text first if you need it.');
      else setError(err.message);
    }
  };

  if (!visible) return null;
  if (!doc) return error ? <p class="error">{error}</p> : <p class="loading">Loading…</p>;
  return (
    <section class="panel document">
      <h2>Document</h2>
      {doc === 'none' && <p class="muted">This chat has no document yet. Write one and save it: the agent's document tools work on it.</p>}
      <label for="doc-name">Name</label>
      <input id="doc-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="doc-text">Text {doc !== 'none' && <span class="muted">(version {doc.version}{dirty ? ', edited' : ''})</span>}</label>
      <textarea id="doc-text" rows={18} value={text} onInput={(e) => setText(e.currentTarget.value)} spellcheck={false} />
      {notice && <p class="warning" role="status">{notice} <button type="button" class="link" onClick={load}>Load the agent's version</button></p>}
      {error && <p class="error" role="alert">{error} <button type="button" class="link" onClick={load}>Load the current one</button></p>}
      <div class="actions">
        <button type="button" class="primary" disabled={doc !== 'none' && !dirty && name === doc.name} onClick={save}>Save</button>
      </div>
    </section>
  );
}
