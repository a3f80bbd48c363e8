// A real OpenID provider for the sign-in tests: `oidc-provider` (a certified implementation) on
// 127.0.0.1, with a client registered for the gateway, accounts with an email, a name and a
// `groups` claim, and its development login page (any password) so a browser or a test can sign
// in. Its signing keys are made at start and can be rotated.
import { createServer } from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';
import { readFileSync, writeFileSync } from 'node:fs';
import { startGateway, writeConfig } from './support.mjs';

export const CLIENT_ID = 'contextgate';
export const CLIENT_SECRET = 'e2e-client-secret-0123456789';
export const ADMIN_KEY = 'e2e-admin-key-0123456789';

// The accounts: the login name is the account id.
export const ACCOUNTS = {
  ada: { email: 'ada@example.com', name: 'Ada Admin', groups: ['platform-admins', 'eng'], team: 'platform' },
  lee: { email: 'lee@example.com', name: 'Lee Lead', groups: ['eng-leads'], team: 'ml' },
  mo: { email: 'mo@example.com', name: 'Mo Member', groups: ['eng'], team: 'ml' },
  vi: { email: 'vi@example.com', name: 'Vi Viewer', groups: [] },
  // A member of no team yet: a newcomer whom a team admin takes in.
  nia: { email: 'nia@example.com', name: 'Nia Newcomer', groups: ['eng'] },
};

function signingKey(kid, type) {
  const { privateKey } = type === 'EC'
    ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
    : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig', alg: type === 'EC' ? 'ES256' : 'RS256' };
}

// Starts the provider; `redirectUri` is the gateway's /auth/callback. Resolves with its issuer,
// rotateKeys() (the provider signs with a new key, of another type, from then on) and close().
export async function startProvider(redirectUri, { idTokenTtl = 600 } = {}) {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  let provider;
  let generation = 0;
  const make = (keys) => {
    provider = new Provider(issuer, {
      clients: [{
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: keys[0].alg,
      }],
      jwks: { keys },
      features: { devInteractions: { enabled: true } },
      scopes: ['openid', 'email', 'profile', 'groups'],
      claims: { openid: ['sub'], email: ['email'], profile: ['name'], groups: ['groups', 'team'] },
      // The scopes' claims in the ID token itself (the gateway reads no userinfo).
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      ttl: { IdToken: idTokenTtl },
      cookies: { keys: ['e2e-cookie-key-0123456789'] },
      async findAccount(ctx, id) {
        const account = ACCOUNTS[id];
        if (!account) return undefined;
        return { accountId: id, claims: async () => ({ sub: id, ...account }) };
      },
    });
  };
  make([signingKey(`rsa-${generation}`, 'RSA')]);
  server.on('request', (req, res) => provider.callback()(req, res));
  return {
    issuer,
    // A new provider instance with a new key only: what a key rotation at the provider looks
    // like to its clients (an ID token with a `kid` they have not seen).
    rotateKeys() {
      generation += 1;
      make([signingKey(`ec-${generation}`, 'EC')]);
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

// A browser's part of a sign-in, with fetch: follows redirects by hand with a cookie jar per
// origin and fills the provider's login and consent forms. Starts at `url` (the gateway's
// /auth/login, or a callback to replay); resolves with the last answer that is not a redirect
// to the provider (or the first redirect `stopAt` accepts), the URLs visited, the cookies and
// the Set-Cookie lines seen.
export async function browse(url, { login = 'ada', jar = new Map(), stopAt } = {}) {
  const visited = [];
  const setCookies = [];  // every Set-Cookie line, to check their attributes
  let method = 'GET';
  let body;
  for (let step = 0; step < 20; step++) {
    const target = new URL(url);
    visited.push(url);
    const cookies = jar.get(target.host) ?? new Map();
    const headers = { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      setCookies.push(line);
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1)];
      if (/max-age=0/i.test(line) || value === '') cookies.delete(name); else cookies.set(name, value);
    }
    jar.set(target.host, cookies);
    method = 'GET';
    body = undefined;
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location'), url).href;
      if (stopAt?.(url)) return { url, visited, jar, setCookies };
      continue;
    }
    const text = await res.text();
    const form = text.match(/<form[^>]*action="([^"]+)"[^>]*method="post"/);
    if (!form || !(res.headers.get('content-type') ?? '').includes('html')) {
      return { status: res.status, text, url, visited, jar, setCookies };
    }
    // The provider's login form (any password) or its consent form.
    const prompt = text.match(/name="prompt" value="(\w+)"/)[1];
    url = new URL(form[1], url).href;
    method = 'POST';
    body = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt }).toString();
  }
  throw new Error(`no end to the redirects: ${visited.join(' -> ')}`);
}

// A port nobody listens on now, for a gateway whose callback address must be known first.
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// A gateway on `port` (its callback address is registered at the provider before it starts)
// signing in at `issuer`, with the admin key for automation and `extra` YAML appended.
export function gatewayFor(name, issuer, port, upstream, extra = '') {
  const config = writeConfig(name, upstream, `admin:
  api_key: ${ADMIN_KEY}
auth:
  oidc:
    issuer: ${issuer}
    client_id: ${CLIENT_ID}
    client_secret: ${CLIENT_SECRET}
    redirect_url: http://127.0.0.1:${port}/auth/callback
    scopes: [openid, email, profile, groups]
    roles_claim: groups
    roles: {platform-admins: admin, eng-leads: team_admin, eng: member}
    team_claim: team
    default_role: viewer
${extra}`);
  writeFileSync(config, readFileSync(config, 'utf8').replace('listen: 127.0.0.1:0', `listen: 127.0.0.1:${port}`));
  return startGateway(config);
}
