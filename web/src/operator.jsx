// The operator's pages (/admin), behind the admin key or a signed-in session: virtual keys (made
// with their limits, model globs and owning team, the secret shown once, revoked), usage and
// spend (usage.jsx), teams and their budgets (teams.jsx), members (members.jsx), the health of
// every upstream and of the routes' targets, the requests as they finish and the audit log. Each
// role sees the pages and buttons roles.js gives it.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, signInWithProvider, signOut, signedIn as session } from './api.js';
import { Audit } from './audit.jsx';
import { Members } from './members.jsx';
import { mayChange, mayManageTeams, pagesOf, usePrincipal } from './roles.js';
import { admin, adminHeaders, adminKey, setAdminKey, useAdmin } from './admin.js';
import { sseParser } from './sse.js';
import { Teams } from './teams.jsx';
import { Usage } from './usage.jsx';
import { dollars } from './usage_report.js';

// Whether this gateway has operator pages: an admin key in this tab, or /admin asking for one
// (a gateway without `admin.api_key` or sign-in has no /admin routes). A signed-in user who may
// not read the upstreams' health (any role but admin) still has pages of their own.
export async function operatorAvailable() {
  if (adminKey()) return true;
  try {
    const res = await fetch('/admin/health');
    return res.status === 401 || res.status === 403 || res.ok;
  } catch {
    return false;
  }
}

const PAGES = [['keys', 'Keys'], ['usage', 'Usage'], ['teams', 'Teams'], ['members', 'Members'], ['health', 'Health'],
  ['log', 'Request log'], ['audit', 'Audit']];
const number = (n) => (n ?? 0).toLocaleString('en-US');

// `oidc`: the gateway signs people in, offered first (the admin key stays for automation).
// `refused`: why the last credentials stopped working ("": they did not).
function AdminSignIn({ onSignedIn, refused, oidc }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(refused);
  const submit = async (e) => {
    e.preventDefault();
    setAdminKey(key.trim());
    try {
      await admin('GET', '/admin/health');
      onSignedIn();
    } catch (err) {
      setAdminKey('');
      setError(err instanceof ApiError && err.status === 401 ? 'The admin key was refused.'
        : err instanceof ApiError && err.status === 404 ? 'This gateway has no admin key (admin.api_key).'
          : err.message);
    }
  };
  return (
    <form class="panel admin-signin" onSubmit={submit} aria-labelledby="admin-signin-title">
      <h1 id="admin-signin-title">Operator sign-in</h1>
      {oidc && (
        <p><button type="button" class="primary" onClick={signInWithProvider}>Sign in with your company account</button></p>
      )}
      <p>{oidc ? 'Or use' : 'The operator pages use'} the gateway's admin key (<code>admin.api_key</code>), kept for this tab only.</p>
      <label for="admin-key">Admin key</label>
      <input id="admin-key" type="password" autocomplete="off" value={key} required
        onInput={(e) => setKey(e.currentTarget.value)} />
      {error && <p class="error" role="alert">{error}</p>}
      <button type="submit" class="primary">Sign in</button>
    </form>
  );
}

// Copies `text`; where the clipboard API is refused (a page not served over HTTPS or from
// localhost), the field `field` is selected and copied the old way.
function CopyButton({ text, field, label }) {
  const [state, setState] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('Copied.');
    } catch {
      const input = document.getElementById(field);
      input?.select();
      setState(document.execCommand?.('copy') ? 'Copied.' : 'Copy failed: the secret is selected, copy it by hand.');
    }
  };
  return (
    <>
      <button type="button" class="small" onClick={copy} aria-label={label}>Copy</button>
      <span class="copy-state" role="status">{state}</span>
    </>
  );
}

// `teams`: the teams the key may belong to (an admin's choice, or the team admin's own team);
// without one the key is its maker's own (a member's).
function NewKey({ onMade, teams }) {
  const empty = { name: '', models: '', rpm: '', tpm: '', max_parallel: '', budget: '', usd: '', period: 'month', expires_at: '',
    team: teams?.length === 1 ? teams[0] : '' };
  const [form, setForm] = useState(empty);
  const [made, setMade] = useState(null);
  const [error, setError] = useState('');
  const field = (name) => ({ value: form[name], onInput: (e) => setForm({ ...form, [name]: e.currentTarget.value }) });
  const submit = async (e) => {
    e.preventDefault();
    const body = { name: form.name.trim() };
    const models = form.models.split(',').map((m) => m.trim()).filter(Boolean);
    if (models.length) body.models = models;
    for (const limit of ['rpm', 'tpm', 'max_parallel']) if (form[limit]) body[limit] = Number(form[limit]);
    // The dollars as typed ("25.00"): the gateway reads them as an exact decimal.
    if (form.budget || form.usd) {
      body.budget = { period: form.period };
      if (form.budget) body.budget.tokens = Number(form.budget);
      if (form.usd) body.budget.usd = form.usd;
    }
    if (form.expires_at) body.expires_at = form.expires_at;
    if (form.team) body.team = form.team;
    try {
      const key = await admin('POST', '/admin/keys', body);
      setMade(key);
      setForm(empty);
      setError('');
      onMade();
    } catch (err) {
      setError(err.message);
    }
  };
  return (
    <section class="panel new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">New key</h2>
      {made && (
        <div class="secret" role="status">
          <p>The key for <strong>{made.name}</strong>. Copy it now: it is shown this once.</p>
          <div class="copy-row">
            <input id="new-secret" aria-label="The new key's secret" readOnly value={made.key} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={made.key} field="new-secret" label="Copy the secret" />
          </div>
        </div>
      )}
      <form onSubmit={submit}>
        <div class="fields">
          <div><label for="key-name">Name</label><input id="key-name" required {...field('name')} /></div>
          <div><label for="key-models">Models</label><input id="key-models" placeholder="gpt-4o*, claude-* (empty: every model)" {...field('models')} /></div>
          <div><label for="key-rpm">Requests per minute</label><input id="key-rpm" type="number" min="0" {...field('rpm')} /></div>
          <div><label for="key-tpm">Tokens per minute</label><input id="key-tpm" type="number" min="0" {...field('tpm')} /></div>
          <div><label for="key-parallel">Requests at once</label><input id="key-parallel" type="number" min="0" {...field('max_parallel')} /></div>
          <div><label for="key-budget">Token budget</label><input id="key-budget" type="number" min="0" {...field('budget')} /></div>
          <div><label for="key-usd">USD budget</label><input id="key-usd" type="number" min="0" step="0.01" placeholder="25.00" {...field('usd')} /></div>
          <div><label for="key-period">Budget period</label>
            <select id="key-period" {...field('period')} onChange={(e) => setForm({ ...form, period: e.currentTarget.value })}>
              <option value="month">month</option><option value="week">week</option><option value="day">day</option>
            </select></div>
          <div><label for="key-expires">Expires</label><input id="key-expires" type="date" {...field('expires_at')} /></div>
          {teams && (
            <div><label for="key-team">Team</label>
              <select id="key-team" value={form.team} onChange={(e) => setForm({ ...form, team: e.currentTarget.value })}>
                {teams.length !== 1 && <option value="">no team</option>}
                {teams.map((t) => <option key={t} value={t}>{t}</option>)}
              </select></div>
          )}
        </div>
        <p class="help">Empty limits: none.</p>
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary">Create key</button>
      </form>
    </section>
  );
}

// `me`: who looks (usePrincipal). A team admin's keys belong to their team; an admin picks one.
function Keys({ onRefused, me }) {
  const readOnly = !mayChange(me.role);
  const { data, error, reload } = useAdmin('/admin/keys', onRefused);
  const teamList = useAdmin(me.role === 'admin' ? '/admin/teams' : null, onRefused);
  const teams = me.role === 'team_admin' ? [me.team].filter(Boolean) : me.role === 'admin' ? teamList.data?.data.map((t) => t.name) ?? [] : null;
  const [confirming, setConfirming] = useState(null);
  const [failed, setFailed] = useState('');
  const revoke = async (key) => {
    try {
      await admin('DELETE', '/admin/keys/' + encodeURIComponent(key.id));
      setFailed('');
      reload();
    } catch (err) {
      setFailed(err.message);
    }
    setConfirming(null);
  };
  const limits = (k) => [k.rpm && `${number(k.rpm)}/min`, k.tpm && `${number(k.tpm)} tokens/min`,
    k.max_parallel && `${k.max_parallel} at once`].filter(Boolean).join(' · ') || 'none';
  // Tokens, dollars (once the keys list carries USD budgets) or both, in the budget's period.
  const budgetUsed = (k) => {
    const used = [k.budget.tokens && `${number(k.usage.budget_used)} / ${number(k.budget.tokens)}`,
      k.budget.usd && `${dollars(k.usage.spent_usd)} / ${dollars(k.budget.usd)}`].filter(Boolean);
    return used.length ? `${used.join(' and ')} a ${k.budget.period}` : '—';
  };
  return (
    <>
      {!readOnly && <NewKey onMade={reload} teams={teams} />}
      <h2>Keys</h2>
      {(error || failed) && <p class="error" role="alert">{error || failed}</p>}
      {!data ? <p class="loading">Loading…</p> : (
        <div class="table-scroll">
          <table class="keys cards">
            <thead><tr><th>Name</th><th>Owner</th><th>Models</th><th>Limits</th><th>Budget used</th><th>Requests</th><th>Tokens</th><th>Expires</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {data.data.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <th scope="row" data-label="Name">{k.name}<span class="meta">{k.id}{k.source === 'config' ? ' · from the file' : ''}</span></th>
                  <td data-label="Owner">{k.team ? `team ${k.team}` : !k.user ? '—' : k.user === me.user?.id ? 'you' : 'a person'}</td>
                  <td data-label="Models">{k.models.length ? k.models.join(', ') : 'every model'}</td>
                  <td data-label="Limits">{limits(k)}</td>
                  <td data-label="Budget used">{budgetUsed(k)}</td>
                  <td data-label="Requests">{number(k.usage.requests)}</td>
                  <td data-label="Tokens">{number(k.usage.total_tokens)}</td>
                  <td data-label="Expires">{k.expires_at ? k.expires_at.slice(0, 10) : 'never'}</td>
                  <td class="row-actions">{readOnly || k.source === 'config' ? null : confirming === k.id ? (
                    <button type="button" class="danger small" onClick={() => revoke(k)}>Revoke {k.name}?</button>
                  ) : (
                    <button type="button" class="small" onClick={() => setConfirming(k.id)} aria-label={`Revoke ${k.name}`}>Revoke</button>
                  )}</td>
                </tr>
              ))}
              {!data.data.length && <tr><td colSpan={9} class="muted">No keys yet.</td></tr>}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

// What each health means, as docs/routing.md says it (shown as the badge's title).
const HEALTH_MEANS = {
  unknown: 'Nothing has reached it since the gateway started.',
  healthy: 'The last request or probe it got succeeded.',
  cooling: 'It failed: routes skip it until its cooldown ends.',
  down: 'It failed and nothing has succeeded since; the next request or probe tries it.',
  probing: 'It was failing; a request or probe is trying it now.',
};
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

function HealthBadge({ health, coolingMs }) {
  return (
    <>
      <span class="badge" title={HEALTH_MEANS[health]}>{health}</span>
      {health === 'cooling' && coolingMs ? ` for ${Math.ceil(coolingMs / 1000)} s` : ''}
    </>
  );
}

// The last failure and when, kept after a recovery.
function LastError({ of }) {
  if (!of.last_error) return '—';
  return <>{of.last_error} <time class="meta" datetime={of.last_error_at}>{when(of.last_error_at)}</time></>;
}

function Health({ onRefused }) {
  const { data, error, reload } = useAdmin('/admin/health', onRefused);
  return (
    <>
      <h2>Upstreams <button type="button" class="small" onClick={reload}>Refresh</button></h2>
      {error && <p class="error" role="alert">{error}</p>}
      {!data ? <p class="loading">Loading…</p> : (
        <section aria-label="Upstreams">
          <div class="table-scroll">
            <table class="upstreams cards">
              <thead><tr><th>Upstream</th><th>Provider</th><th>Health</th><th>Since</th><th>Last error</th><th>Probes</th></tr></thead>
              <tbody>
                {(data.upstreams ?? []).map((u) => (
                  <tr key={u.name} class={'health-' + u.health}>
                    <td data-label="Upstream">{u.name}</td>
                    <td data-label="Provider">{u.provider}</td>
                    <td data-label="Health"><HealthBadge health={u.health} coolingMs={u.cooling_for_ms} /></td>
                    <td data-label="Since">{u.since ? <time datetime={u.since}>{when(u.since)}</time> : '—'}</td>
                    <td data-label="Last error"><LastError of={u} /></td>
                    <td data-label="Probes">{u.probe_interval_ms ? `every ${number(u.probe_interval_ms / 1000)} s` : 'off'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <h2>Routes and their targets</h2>
      {!data ? null : !data.routes.length ? (
        <p class="muted">No routes are configured: each model goes to the upstream its globs pick (docs/routing.md).</p>
      ) : data.routes.map((r) => (
        <section class="route" key={r.model} aria-label={`Route ${r.model}`}>
          <h3><code>{r.model}</code> <span class="badge">{r.strategy}</span></h3>
          <div class="table-scroll">
            <table class="targets cards">
              <thead><tr><th>Upstream</th><th>Model</th><th>Health</th><th>Failures in a row</th><th>In flight</th><th>First byte</th><th>Last error</th></tr></thead>
              <tbody>
                {r.targets.map((t, i) => (
                  <tr key={i} class={'health-' + t.health}>
                    <td data-label="Upstream">{t.upstream}{t.on_context_window ? ' (context window)' : ''}</td>
                    <td data-label="Model">{t.model ?? r.model}</td>
                    <td data-label="Health"><HealthBadge health={t.health} coolingMs={t.cooled_for_ms ?? t.unusable_for_ms} /></td>
                    <td data-label="Failures in a row">{t.failures_in_a_row}</td>
                    <td data-label="In flight">{t.in_flight}</td>
                    <td data-label="First byte">{t.first_byte_ms !== undefined ? `${number(t.first_byte_ms)} ms` : '—'}</td>
                    <td data-label="Last error"><LastError of={t} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ))}
    </>
  );
}

// The access lines as they happen (/admin/log, server-sent events read through fetch so that the
// admin key goes in a header), the latest 500 kept, filtered by any text they hold.
function RequestLog({ onRefused }) {
  const [lines, setLines] = useState([]);
  // The log names a key by its id; the names come from the keys list, read again when a line
  // names a key made since.
  const keys = useAdmin('/admin/keys', onRefused);
  const names = useMemo(() => new Map((keys.data?.data ?? []).map((k) => [k.id, k.name])), [keys.data]);
  const unknown = lines.find((l) => l.key_id && !names.has(l.key_id))?.key_id;
  const asked = useRef(new Set());
  useEffect(() => {
    if (!keys.data || !unknown || asked.current.has(unknown)) return;
    asked.current.add(unknown);
    keys.reload();
  }, [unknown, keys.data, keys.reload]);
  const keyName = (id) => (!id ? '—' : names.get(id) ?? id);
  const [filter, setFilter] = useState('');
  const [state, setState] = useState('connecting');
  useEffect(() => {
    const stop = new AbortController();
    (async () => {
      try {
        const res = await fetch('/admin/log', { headers: adminHeaders(), signal: stop.signal });
        if (res.status === 401) return onRefused();
        if (!res.ok) return setState(`failed: HTTP ${res.status}`);
        setState('following');
        let dropped;
        const feed = sseParser(({ event, data }) => {
          let line;
          try { line = JSON.parse(data); } catch { return; }
          // The gateway's last event when this page fell too far behind (a tab in the background).
          if (event === 'dropped') dropped = line.message ?? 'dropped by the gateway';
          else setLines((all) => [line, ...all].slice(0, 500));
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          feed(value);
        }
        setState(dropped ? 'stopped: ' + dropped : 'ended');
      } catch (err) {
        if (!stop.signal.aborted) setState('failed: ' + err.message);
      }
    })();
    return () => stop.abort();
  }, [onRefused]);
  const shown = useMemo(() => {
    const q = filter.trim().toLowerCase();
    return q ? lines.filter((l) => (JSON.stringify(l) + ' ' + (names.get(l.key_id) ?? '')).toLowerCase().includes(q)) : lines;
  }, [lines, filter, names]);
  return (
    <>
      <h2>Requests as they finish <span class="badge" role="status">{state}</span></h2>
      <label for="log-filter">Filter</label>
      <input id="log-filter" type="search" placeholder="a path, a status, a model, a key, cache=hit…" value={filter}
        onInput={(e) => setFilter(e.currentTarget.value)} />
      <div class="table-scroll">
        <table class="request-log cards">
          <thead><tr><th>Time</th><th>Request</th><th>Status</th><th>Time taken</th><th>Upstream</th><th>Model</th><th>Key</th><th>Cache</th><th>Tokens</th></tr></thead>
          <tbody>
            {shown.map((l) => (
              <tr key={l.request_id + l.time}>
                <td data-label="Time">{l.time.slice(11, 23)}</td>
                <td data-label="Request"><code>{l.method} {l.path}</code></td>
                <td data-label="Status">{l.status}</td>
                <td data-label="Time taken">{(l.duration_us / 1000).toFixed(1)} ms</td>
                <td data-label="Upstream">{l.upstream ?? '—'}{l.attempts > 1 ? ` (${l.attempts} attempts)` : ''}</td>
                <td data-label="Model">{l.model ?? '—'}</td>
                <td data-label="Key">{keyName(l.key_id)}</td>
                <td data-label="Cache">{l.cache ?? '—'}</td>
                <td data-label="Tokens">{l.input_tokens !== undefined ? `${number(l.input_tokens)} / ${number(l.output_tokens)}` : '—'}</td>
              </tr>
            ))}
            {!shown.length && <tr><td colSpan={9} class="muted">{lines.length ? 'No request matches.' : 'No request finished since this page opened.'}</td></tr>}
          </tbody>
        </table>
      </div>
    </>
  );
}

// `oidc`: whether the gateway signs people in (GET /auth/config).
export function Operator({ page, oidc }) {
  const [signedIn, setSignedIn] = useState(Boolean(adminKey() || session()));
  const [refused, setRefused] = useState('');
  const onRefused = useCallback(() => {
    setRefused(adminKey() ? 'The admin key was refused.' : 'Your session has ended: sign in again.');
    setAdminKey('');
    setSignedIn(false);
  }, []);
  const me = usePrincipal(Boolean(adminKey()));
  const pages = PAGES.filter(([id]) => pagesOf(me?.role).includes(id));
  const current = pages.some(([id]) => id === page) ? page : 'keys';
  // The admin key is forgotten; a signed-in user's session ends, back to the console's sign-in.
  const leave = () => {
    if (adminKey()) { setAdminKey(''); setSignedIn(false); return; }
    signOut().then(() => location.assign('/console/'));
  };
  return (
    <div class="operator">
      <header class="topbar">
        <a class="brand" href="#/">contextgate</a>
        <nav aria-label="Operator pages" class="operator-nav">
          {pages.map(([id, label]) => (
            <a key={id} href={'#/admin/' + id} aria-current={current === id ? 'page' : undefined}>{label}</a>
          ))}
          {me?.user && <span class="who" title={me.user.email}>{me.user.name || me.user.email} · {me.role}{me.team ? ` · ${me.team}` : ''}</span>}
          {signedIn && <button type="button" class="link" onClick={leave}>Sign out</button>}
        </nav>
      </header>
      <main class="operator-main" id="main">
        {!signedIn ? <AdminSignIn refused={refused} oidc={oidc} onSignedIn={() => { setRefused(''); setSignedIn(true); }} />
          : !me ? <p class="loading">Loading…</p>
            : current === 'keys' ? <Keys onRefused={onRefused} me={me} />
              : current === 'usage' ? <Usage onRefused={onRefused} />
                : current === 'teams' ? <Teams onRefused={onRefused} manage={mayManageTeams(me.role)} />
                  : current === 'members' ? <Members onRefused={onRefused} me={me} />
                    : current === 'log' ? <RequestLog onRefused={onRefused} />
                      : current === 'audit' ? <Audit onRefused={onRefused} />
                        : <Health onRefused={onRefused} />}
      </main>
    </div>
  );
}
