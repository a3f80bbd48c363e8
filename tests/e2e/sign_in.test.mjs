// Sign-in with a real OpenID provider (oidc-provider on loopback, oidc_provider.mjs): the whole
// authorization code flow through the provider's login page, the session cookie and its CSRF
// rule, logout, a rotated signing key; and what must be refused: a tampered state, a replayed
// callback or code, an ID token from another issuer, for another audience or expired (those from
// a provider of the test's own making that signs whatever it is told to).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { generateKeyPairSync, sign } from 'node:crypto';
import { startScriptedFake } from './support.mjs';
import { ADMIN_KEY, CLIENT_ID, CLIENT_SECRET, browse, freePort, gatewayFor, startProvider } from './oidc_provider.mjs';

const cookieHeader = (jar, base) =>
  [...(jar.get(new URL(base).host) ?? new Map())].map(([k, v]) => `${k}=${v}`).join('; ');

async function me(base, cookie) {
  const res = await fetch(base + '/auth/me', { headers: { cookie } });
  return { status: res.status, json: await res.json() };
}

describe('sign-in through oidc-provider', () => {
  let provider;
  let gw;
  let base;
  before(async () => {
    const upstream = await startScriptedFake([]);
    const port = await freePort();
    provider = await startProvider(`http://127.0.0.1:${port}/auth/callback`);
    gw = await gatewayFor('sign-in.yaml', provider.issuer, port, upstream);
    base = gw.base;
  });
  after(() => provider?.close());

  const signIn = (login, ret = '/console/keys') =>
    browse(`${base}/auth/login?return=${encodeURIComponent(ret)}`, {
      login, stopAt: (url) => url.startsWith(base + '/console'),
    });

  test('the console asks whether sign-in is on', async () => {
    const res = await fetch(base + '/auth/config');
    assert.deepEqual(await res.json(), { oidc: true });
    assert.equal((await me(base, '')).status, 401);
  });

  test('a user signs in on the provider\'s login page and gets a session', async () => {
    const done = await signIn('ada');
    assert.equal(done.url, base + '/console/keys', done.visited.join(' -> '));
    assert.ok(done.visited.some((u) => u.startsWith(provider.issuer + '/interaction/')), 'the login page was shown');
    const line = done.setCookies.find((l) => l.startsWith('contextgate_session='));
    assert.match(line, /HttpOnly/);
    assert.match(line, /SameSite=Lax/);
    assert.match(line, /Path=\//);
    assert.doesNotMatch(line, /Secure/);  // http://: the cookie would never come back
    const who = await me(base, cookieHeader(done.jar, base));
    assert.equal(who.status, 200);
    assert.deepEqual(who.json.user.email, 'ada@example.com');
    assert.equal(who.json.user.name, 'Ada Admin');
    assert.match(who.json.user.id, /^user_/);
    assert.equal(who.json.role, 'admin');  // platform-admins
    assert.equal(who.json.team, 'platform');
    assert.ok(who.json.csrf.length >= 32);
    // Each mapping: eng-leads is team_admin, eng a member, no mapped group the default.
    for (const [login, role, team] of [['lee', 'team_admin', 'ml'], ['mo', 'member', 'ml'], ['vi', 'viewer', '']]) {
      const other = await signIn(login);
      const said = await me(base, cookieHeader(other.jar, base));
      assert.equal(said.json.role, role, login);
      assert.equal(said.json.team, team, login);
    }
  });

  test('a session opens /admin; a change needs its CSRF token, so a cross-site post fails', async () => {
    const done = await signIn('ada');
    const cookie = cookieHeader(done.jar, base);
    const { csrf } = (await me(base, cookie)).json;
    const list = await fetch(base + '/admin/keys', { headers: { cookie } });
    assert.equal(list.status, 200);
    const body = JSON.stringify({ name: 'from-session' });
    const forged = await fetch(base + '/admin/keys', {
      method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body,
    });
    assert.equal(forged.status, 403);
    assert.match((await forged.json()).error.message, /X-CSRF-Token/);
    const crossSite = await fetch(base + '/admin/keys', {
      method: 'POST', headers: { cookie, 'content-type': 'application/json', origin: 'https://evil.example' }, body,
    });
    assert.equal(crossSite.status, 403);
    const made = await fetch(base + '/admin/keys', {
      method: 'POST', headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': csrf }, body,
    });
    assert.equal(made.status, 201, await made.text());
    // The automation key needs none (no cookie a page could send).
    const automation = await fetch(base + '/admin/keys', { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    assert.equal(automation.status, 200);
  });

  test('a tampered state, a replayed callback and a replayed code are refused', async () => {
    const atCallback = await browse(`${base}/auth/login?return=/console/`, {
      login: 'mo', stopAt: (url) => url.startsWith(base + '/auth/callback'),
    });
    const callback = new URL(atCallback.url);
    const tampered = new URL(callback);
    tampered.searchParams.set('state', callback.searchParams.get('state') + 'x');
    let res = await fetch(tampered, { redirect: 'manual' });
    assert.equal(res.status, 401);
    assert.match((await res.json()).error.message, /state.*unknown, used already or expired/);
    res = await fetch(callback, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/console/');
    res = await fetch(callback, { redirect: 'manual' });  // the same answer again
    assert.equal(res.status, 401);
    // The used code under a fresh sign-in's state: the provider refuses to redeem it twice.
    const start = await fetch(base + '/auth/login', { redirect: 'manual' });
    const fresh = new URL(start.headers.get('location')).searchParams.get('state');
    const replay = `${base}/auth/callback?code=${encodeURIComponent(callback.searchParams.get('code'))}&state=${fresh}`;
    res = await fetch(replay, { redirect: 'manual' });
    assert.equal(res.status, 401);
    assert.match((await res.json()).error.message, /refused the code.*invalid_grant/);
  });

  test('a return address on another site is not followed', async () => {
    const res = await fetch(`${base}/auth/login?return=${encodeURIComponent('//evil.example/x')}`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    const done = await browse(res.headers.get('location'), { login: 'mo', stopAt: (u) => !u.startsWith(provider.issuer) && !u.startsWith(base + '/auth/') });
    assert.equal(done.url, base + '/console/');
  });

  test('logout ends the session on the server', async () => {
    const done = await signIn('mo');
    const cookie = cookieHeader(done.jar, base);
    const { csrf } = (await me(base, cookie)).json;
    const refused = await fetch(base + '/auth/logout', { method: 'POST', headers: { cookie } });
    assert.equal(refused.status, 403);  // no CSRF token: a page cannot sign the user out either
    const out = await fetch(base + '/auth/logout', { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(out.status, 200);
    assert.match(out.headers.get('set-cookie'), /contextgate_session=;.*Max-Age=0/);
    assert.equal((await me(base, cookie)).status, 401);  // the old cookie opens nothing
    assert.equal((await fetch(base + '/admin/keys', { headers: { cookie } })).status, 401);
  });

  test('a signing key the provider rotated to is picked up', async () => {
    await signIn('ada');  // the gateway holds the first key now
    provider.rotateKeys();
    const done = await signIn('ada');
    assert.equal(done.url, base + '/console/keys', `${done.status} ${done.text}`);
    assert.equal((await me(base, cookieHeader(done.jar, base))).json.role, 'admin');
  });
});

// A provider of the test's own: it answers discovery and JWKS, and its token endpoint hands out
// the ID token the test built for the sign-in at hand (signed with its key, right or wrong in
// one claim).
describe('ID tokens the gateway must refuse', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' };
  delete jwk.d; delete jwk.p; delete jwk.q; delete jwk.dp; delete jwk.dq; delete jwk.qi;
  let issuer;
  let nextToken = () => '';
  let server;
  let gw;
  const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
  const jwt = (claims) => {
    const input = `${b64({ alg: 'RS256', kid: 'k1', typ: 'JWT' })}.${b64(claims)}`;
    return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
  };

  before(async () => {
    server = createServer((req, res) => {
      const json = (v) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify(v)); };
      if (req.url === '/.well-known/openid-configuration') {
        return json({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, token_endpoint_auth_methods_supported: ['client_secret_post'] });
      }
      if (req.url === '/jwks') return json({ keys: [jwk] });
      if (req.url === '/token' && req.method === 'POST') {
        let body = '';
        req.on('data', (d) => { body += d; });
        req.on('end', () => {
          const form = new URLSearchParams(body);
          // client_secret_post, as discovery says: the secret in the body.
          if (form.get('client_secret') !== CLIENT_SECRET || !form.get('code_verifier')) {
            res.statusCode = 401;
            return json({ error: 'invalid_client' });
          }
          json({ access_token: 'x', token_type: 'Bearer', id_token: nextToken() });
        });
        return undefined;
      }
      res.statusCode = 404;
      res.end();
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${server.address().port}`;
    const upstream = await startScriptedFake([]);
    gw = await gatewayFor('sign-in-fake.yaml', issuer, await freePort(), upstream);
  });
  after(() => server?.close());

  // Starts a sign-in and answers its callback with the token `claims(nonce)` builds.
  async function signInWith(claims) {
    const start = await fetch(gw.base + '/auth/login', { redirect: 'manual' });
    const asked = new URL(start.headers.get('location'));
    assert.equal(asked.searchParams.get('code_challenge_method'), 'S256');
    const now = Math.floor(Date.now() / 1000);
    nextToken = () => jwt(claims({ nonce: asked.searchParams.get('nonce'), now }));
    const res = await fetch(`${gw.base}/auth/callback?code=c1&state=${asked.searchParams.get('state')}`, { redirect: 'manual' });
    return { status: res.status, text: await res.text(), setCookie: res.headers.get('set-cookie') };
  }
  const good = ({ nonce, now }) => ({ iss: issuer, sub: 'u1', aud: CLIENT_ID, exp: now + 300, iat: now, nonce, email: 'u1@example.com' });

  test('a right token signs in (the secret posted, as discovery asked)', async () => {
    const res = await signInWith(good);
    assert.equal(res.status, 302, res.text);
  });

  for (const [what, change, says] of [
    ['another issuer', (c) => ({ ...c, iss: 'https://evil.example' }), /not the configured issuer/],
    ['another audience', (c) => ({ ...c, aud: 'someone-else' }), /another client/],
    ['an expired token', (c) => ({ ...c, exp: c.iat - 3600, iat: c.iat - 7200 }), /expired/],
    ['another sign-in\'s nonce', (c) => ({ ...c, nonce: 'stolen' }), /nonce/],
  ]) {
    test(`${what} is refused`, async () => {
      const res = await signInWith((ctx) => change(good(ctx)));
      assert.equal(res.status, 401, res.text);
      assert.match(JSON.parse(res.text).error.message, says);
    });
  }

  test('sign-ins, sign-outs and refused callbacks are in the audit log, without codes or tokens', async () => {
    const audit = async (action) => {
      const res = await fetch(`${gw.base}/admin/audit?action=${action}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      assert.equal(res.status, 200);
      return (await res.json()).data;
    };
    // A stranger's callback with a made-up state is refused and logged, not audited.
    const before = (await audit('auth.refused')).length;
    const stranger = await fetch(`${gw.base}/auth/callback?state=made-up&code=x&error=spam`, { redirect: 'manual' });
    assert.equal(stranger.status, 401);
    assert.equal((await audit('auth.refused')).length, before);
    const refused = await signInWith((ctx) => ({ ...good(ctx), aud: 'someone-else' }));
    assert.equal(refused.status, 401, refused.text);
    const [why] = await audit('auth.refused');
    assert.match(why.detail.reason, /another client/);
    assert.equal(why.remote, '127.0.0.1');
    // The reason alone: neither the code nor the ID token.
    assert.deepEqual(Object.keys(why.detail), ['reason']);
    assert.doesNotMatch(why.detail.reason, /code=|eyJ/);

    const signedIn = await signInWith(good);
    assert.equal(signedIn.status, 302, signedIn.text);
    const [entry] = await audit('auth.sign_in');
    assert.equal(entry.actor_email, 'u1@example.com');
    assert.equal(entry.detail.email, 'u1@example.com');
    assert.equal(entry.actor_role, 'viewer');  // no group maps: default_role
    assert.equal(entry.remote, '127.0.0.1');

    const cookie = signedIn.setCookie.split(';')[0];
    const { csrf } = await (await fetch(gw.base + '/auth/me', { headers: { cookie } })).json();
    const out = await fetch(gw.base + '/auth/logout', { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(out.status, 200);
    const [left] = await audit('auth.sign_out');
    assert.equal(left.actor, entry.actor);
    assert.equal(left.remote, '127.0.0.1');
  });
});
