// The Teams page: each team's budget, what it spent in the budget's period, its models and keys
// (GET /admin/teams). A team admin sees their own team's; an admin sees every team, makes teams,
// and changes the budget of or deletes those made here (declared ones live in the configuration).
import { useState } from 'preact/hooks';
import { admin, useAdmin } from './admin.js';
import { dollars } from './usage_report.js';

const PERIOD = { day: 'today', week: 'this week', month: 'this month' };

function NewTeam({ onMade }) {
  const empty = { name: '', usd: '', period: 'month', models: '' };
  const [form, setForm] = useState(empty);
  const [error, setError] = useState('');
  const field = (name) => ({ value: form[name], onInput: (e) => setForm({ ...form, [name]: e.currentTarget.value }) });
  const submit = async (e) => {
    e.preventDefault();
    const body = { name: form.name.trim() };
    const models = form.models.split(',').map((m) => m.trim()).filter(Boolean);
    if (models.length) body.models = models;
    // The dollars as typed ("500.00"): the gateway reads them as an exact decimal.
    if (form.usd) body.budget = { usd: form.usd, period: form.period };
    try {
      await admin('POST', '/admin/teams', body);
      setForm(empty);
      setError('');
      onMade();
    } catch (err) {
      setError(err.message);
    }
  };
  return (
    <section class="panel new-team" aria-labelledby="new-team-title">
      <h2 id="new-team-title">New team</h2>
      <form onSubmit={submit}>
        <div class="fields">
          <div><label for="team-name">Name</label><input id="team-name" required {...field('name')} /></div>
          <div><label for="team-usd">USD budget</label><input id="team-usd" type="number" min="0" step="0.01" placeholder="500.00" {...field('usd')} /></div>
          <div><label for="team-period">Budget period</label>
            <select id="team-period" value={form.period} onChange={(e) => setForm({ ...form, period: e.currentTarget.value })}>
              <option value="month">month</option><option value="week">week</option><option value="day">day</option>
            </select></div>
          <div><label for="team-models">Models</label><input id="team-models" placeholder="gpt-4o*, claude-* (empty: every model)" {...field('models')} /></div>
        </div>
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary">Create team</button>
      </form>
    </section>
  );
}

// One team's row; an admin changes the budget of a team made here (declared ones live in the
// configuration) or deletes it.
function TeamRow({ team: t, manage, onChanged }) {
  const [editing, setEditing] = useState(null); // {usd, period} while the budget is edited
  const [error, setError] = useState('');
  const changeable = manage && t.source !== 'config';
  const act = async (method, body) => {
    try {
      await admin(method, '/admin/teams/' + encodeURIComponent(t.name), body);
      setError('');
      setEditing(null);
      onChanged();
    } catch (err) {
      setError(err.message);
    }
  };
  const save = (e) => {
    e.preventDefault();
    // The dollars as typed; empty: no budget.
    act('PATCH', { budget: { usd: editing.usd || '0', period: editing.period } });
  };
  const budget = t.budget.usd > 0 ? `${dollars(t.budget.usd)} a ${t.budget.period}` : 'none';
  return (
    <tr data-team={t.name} class={t.budget.usd > 0 && t.spent_usd >= t.budget.usd ? 'over' : undefined}>
      <th scope="row" data-label="Team">{t.name}<span class="meta">{t.source === 'config' ? 'from the file' : 'made here'}</span></th>
      <td data-label="Budget">{!editing ? budget : (
        <form class="inline-budget" onSubmit={save} aria-label={`Budget of ${t.name}`}>
          <input type="number" min="0" step="0.01" aria-label="USD" value={editing.usd}
            onInput={(e) => setEditing({ ...editing, usd: e.currentTarget.value })} />
          <select aria-label="Period" value={editing.period} onChange={(e) => setEditing({ ...editing, period: e.currentTarget.value })}>
            <option value="month">a month</option><option value="week">a week</option><option value="day">a day</option>
          </select>
          <button type="submit" class="small primary">Save</button>
          <button type="button" class="small" onClick={() => setEditing(null)}>Cancel</button>
        </form>
      )}</td>
      <td data-label="Spent">{dollars(t.spent_usd)} {PERIOD[t.budget.period] ?? ''}</td>
      <td data-label="Models">{t.models.length ? t.models.join(', ') : 'every model'}</td>
      <td data-label="Keys">{t.keys}</td>
      <td class="row-actions">
        {changeable && !editing && (
          <>
            <button type="button" class="small" aria-label={`Change the budget of ${t.name}`}
              onClick={() => setEditing({ usd: t.budget.usd ? String(t.budget.usd) : '', period: t.budget.period })}>Budget</button>
            <button type="button" class="small" onClick={() => act('DELETE')} aria-label={`Delete team ${t.name}`}>Delete</button>
          </>
        )}
        {error && <p class="error" role="alert">{error}</p>}
      </td>
    </tr>
  );
}

export function Teams({ onRefused, manage }) {
  const { data, error, reload } = useAdmin('/admin/teams', onRefused);
  return (
    <>
      {manage && <NewTeam onMade={reload} />}
      <h2>Teams</h2>
      {error && <p class="error" role="alert">{error}</p>}
      {!data ? <p class="loading">Loading…</p> : (
        <div class="table-scroll">
          <table class="teams cards">
            <thead><tr><th>Team</th><th>Budget</th><th>Spent</th><th>Models</th><th>Keys</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {data.data.map((t) => <TeamRow key={t.name} team={t} manage={manage} onChanged={reload} />)}
              {!data.data.length && <tr><td colSpan={6} class="muted">No teams yet.</td></tr>}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
