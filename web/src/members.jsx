// The Members page, for admins and team admins: the people who signed in (GET /admin/users), each
// with their role and team. An admin gives anyone any role and team; a team admin makes their
// members members or viewers, and takes a member or viewer of no team into their team (the
// gateway lists those to a team admin for that). Every change is in the audit log.
import { useState } from 'preact/hooks';
import { admin, useAdmin } from './admin.js';
import { mayEditUser, rolesGrantedBy } from './roles.js';

const when = (iso) => (iso ? new Date(iso).toLocaleString() : 'never');

// The teams `me` may put `user` in ('' is no team): an admin any, or none; a team admin their
// own (a member of theirs stays in it; a newcomer may stay out until taken in).
function teamsFor(me, user, teams) {
  if (me.role === 'admin') return ['', ...teams.map((t) => t.name)];
  return user.team ? [me.team] : ['', me.team];
}

function MemberRow({ me, user, teams, onChanged }) {
  const [role, setRole] = useState(user.role);
  const [team, setTeam] = useState(user.team ?? '');
  const [error, setError] = useState('');
  const editable = mayEditUser(me.role, user);
  const changed = role !== user.role || team !== (user.team ?? '');
  const label = user.name || user.email;
  const save = async (e) => {
    e.preventDefault();
    const body = {};
    if (role !== user.role) body.role = role;
    if (team !== (user.team ?? '')) body.team = team || null;
    try {
      await admin('PATCH', '/admin/users/' + encodeURIComponent(user.id), body);
      setError('');
      onChanged();
    } catch (err) {
      setError(err.message);
    }
  };
  return (
    <tr data-user-id={user.id}>
      <th scope="row" data-label="Person"><span class="name">{label}</span><span class="meta">{user.email}</span></th>
      <td data-label="Role">{!editable ? user.role : (
        <select aria-label={`Role of ${label}`} value={role} onChange={(e) => setRole(e.currentTarget.value)}>
          {rolesGrantedBy(me.role).map((r) => <option key={r} value={r}>{r}</option>)}
        </select>
      )}</td>
      <td data-label="Team">{!editable ? user.team ?? '—' : (
        <select aria-label={`Team of ${label}`} value={team} onChange={(e) => setTeam(e.currentTarget.value)}>
          {teamsFor(me, user, teams).map((t) => <option key={t} value={t}>{t || 'no team'}</option>)}
        </select>
      )}</td>
      <td data-label="Last sign-in">{when(user.signed_in_at)}</td>
      <td class="row-actions">
        {editable && (
          <form onSubmit={save}>
            <button type="submit" class="small" disabled={!changed} aria-label={`Save ${label}`}>Save</button>
          </form>
        )}
        {error && <p class="error" role="alert">{error}</p>}
      </td>
    </tr>
  );
}

export function Members({ me, onRefused }) {
  const { data, error, reload } = useAdmin('/admin/users', onRefused);
  const teams = useAdmin('/admin/teams', onRefused);
  return (
    <>
      <h2>Members <button type="button" class="small" onClick={reload}>Refresh</button></h2>
      <p class="help">{me.role === 'admin' ? 'Everyone who signed in. Give each a role and a team.'
        : `Team ${me.team}'s members, and the people of no team you may take into it.`}</p>
      {(error || teams.error) && <p class="error" role="alert">{error || teams.error}</p>}
      {!data || !teams.data ? <p class="loading">Loading…</p> : (
        <div class="table-scroll">
          <table class="members cards">
            <thead><tr><th>Person</th><th>Role</th><th>Team</th><th>Last sign-in</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {data.data.map((u) => (
                // Keyed by what it shows too, so a saved change resets the row's choices.
                <MemberRow key={`${u.id} ${u.role} ${u.team}`} me={me} user={u} teams={teams.data.data} onChanged={reload} />
              ))}
              {!data.data.length && <tr><td colSpan={5} class="muted">Nobody has signed in yet.</td></tr>}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
