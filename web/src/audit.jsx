// The operator's Audit page: every change made through /admin (keys, teams, users, reloads) and
// every sign-in, sign-out and refused sign-in, who made it, when and from where, newest first,
// filtered by actor, action, target and days.
import { useState } from 'preact/hooks';
import { useAdmin } from './admin.js';

const ACTIONS = ['', 'key.create', 'key.update', 'key.revoke', 'team.create', 'team.update',
  'team.delete', 'user.update', 'config.reload', 'auth.sign_in', 'auth.sign_out', 'auth.refused'];

// The query string of the filters that are set.
const queryOf = (filters) => {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value) q.set(name, value);
  const text = q.toString();
  return text ? '?' + text : '';
};

// The changed fields, as the request sent them.
const detailText = (detail) => Object.entries(detail ?? {})
  .map(([name, value]) => `${name}: ${typeof value === 'object' ? JSON.stringify(value) : value}`).join(', ') || '—';

export function Audit({ onRefused }) {
  const empty = { actor: '', action: '', target: '', from: '', to: '', limit: '100' };
  const [form, setForm] = useState(empty);
  const [filters, setFilters] = useState(empty);
  const { data, error, reload } = useAdmin('/admin/audit' + queryOf(filters), onRefused);
  const field = (name) => ({ value: form[name], onInput: (e) => setForm({ ...form, [name]: e.currentTarget.value }) });
  return (
    <>
      <form class="panel audit-filters" aria-label="Audit filters" onSubmit={(e) => { e.preventDefault(); setFilters(form); }}>
        <label for="audit-actor">Actor</label>
        <input id="audit-actor" placeholder="user_… or api-key" {...field('actor')} />
        <label for="audit-action">Action</label>
        <select id="audit-action" value={form.action} onChange={(e) => setForm({ ...form, action: e.currentTarget.value })}>
          {ACTIONS.map((a) => <option key={a} value={a}>{a || 'any'}</option>)}
        </select>
        <label for="audit-target">Target</label>
        <input id="audit-target" placeholder="a key id, team or user" {...field('target')} />
        <label for="audit-from">From</label>
        <input id="audit-from" type="date" {...field('from')} />
        <label for="audit-to">To</label>
        <input id="audit-to" type="date" {...field('to')} />
        <button type="submit" class="primary">Show</button>
        <button type="button" onClick={() => { setForm(empty); setFilters(empty); }}>Clear</button>
      </form>
      <h2>Audit log <button type="button" class="small" onClick={reload}>Refresh</button></h2>
      {error && <p class="error" role="alert">{error}</p>}
      {!data ? <p class="loading">Loading…</p> : data.data.length === 0 ? <p>No changes on record.</p> : (
        <div class="table-scroll">
          <table class="audit cards">
            <thead><tr><th>When</th><th>Who</th><th>Role</th><th>Action</th><th>Target</th><th>Team</th><th>Changed</th><th>From</th></tr></thead>
            <tbody>
              {data.data.map((r) => (
                <tr key={r.id}>
                  <td data-label="When"><time datetime={r.at}>{new Date(r.at).toLocaleString()}</time></td>
                  <td data-label="Who">{r.actor_email ?? r.actor}</td>
                  <td data-label="Role">{r.actor_role}</td>
                  <td data-label="Action">{r.action}</td>
                  <td data-label="Target">{r.target || '—'}</td>
                  <td data-label="Team">{r.team ?? '—'}</td>
                  <td data-label="Changed">{detailText(r.detail)}</td>
                  <td data-label="From">{r.remote}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
