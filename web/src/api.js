// The Context API client: JSON requests with the tab's API key, errors as ApiError carrying the
// gateway's OpenAI-style envelope. The key lives in sessionStorage: this tab only, gone when the
// tab closes.
const KEY = 'contextgate.key';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? body?.error?.type ?? null;
    this.body = body;
  }
}

export const getKey = () => sessionStorage.getItem(KEY) ?? '';
export const setKey = (key) => (key ? sessionStorage.setItem(KEY, key) : sessionStorage.removeItem(KEY));

// Headers for a /context request. /v1 requests go upstream, so they never carry this key.
export function authHeaders(extra = {}) {
  const key = getKey();
  return key ? { ...extra, authorization: 'Bearer ' + key } : extra;
}

// The signed-in user's session (GET /auth/me), when the gateway signs people in: its cookie
// goes with every request by itself; a change must also carry the session's CSRF token.
let session = null;
export const signedIn = () => session;

// Whether the gateway signs people in (auth.oidc), and who is signed in in this browser: null
// when nobody is, or sign-in is off.
export async function loadSession() {
  const settings = await fetch('/auth/config').then((r) => (r.ok ? r.json() : { oidc: false }), () => ({ oidc: false }));
  if (!settings.oidc) return { oidc: false, user: null };
  const me = await fetch('/auth/me');
  session = me.ok ? await me.json() : null;
  return { oidc: true, user: session };
}

// To the provider's sign-in page, and back to this page of the console afterwards.
export const signInWithProvider = () => {
  location.href = '/auth/login?return=' + encodeURIComponent('/console/' + location.hash);
};

export async function signOut() {
  if (session) await fetch('/auth/logout', { method: 'POST', headers: { 'x-csrf-token': session.csrf } });
  session = null;
}

// `bearer`: this key instead of the tab's Context API key (the operator pages' admin key).
export async function api(method, path, body, { auth = true, signal, bearer } = {}) {
  const headers = body === undefined ? {} : { 'content-type': 'application/json' };
  if (session && method !== 'GET') headers['x-csrf-token'] = session.csrf;
  const res = await fetch(path, {
    method,
    headers: bearer !== undefined ? { ...headers, authorization: 'Bearer ' + bearer }
      : auth ? authHeaders(headers) : headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

export const get = (path, options) => api('GET', path, undefined, options);
export const post = (path, body = {}, options) => api('POST', path, body, options);
