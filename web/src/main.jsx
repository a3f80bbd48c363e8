// The contextgate console: a single page served by the gateway at /console/. Routes live in the
// URL's hash (#/chat/ID), so the gateway serves one index.html and nothing else by path.
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import 'diff2html/bundles/css/diff2html.min.css';
import 'highlight.js/styles/github.css';
import './style.css';
import { ApiError, get, getKey, loadSession, setKey, signInWithProvider, signOut, signedIn } from './api.js';
import { ChatList, NewChat } from './chats.jsx';
import { ChatView } from './chat.jsx';
import { Operator, operatorAvailable } from './operator.jsx';
import { Playground } from './playground.jsx';
import { mayChange } from './roles.js';

const routeOf = () => {
  const hash = location.hash.replace(/^#\/?/, '');
  const [page, id] = hash.split('/');
  return { page: page || 'home', id: id ? decodeURIComponent(id) : null };
};

// Sign-in with the company's identity provider, when the gateway offers it (auth.oidc).
function ProviderSignIn() {
  return (
    <main class="signin">
      <section aria-labelledby="signin-title">
        <h1 id="signin-title">contextgate</h1>
        <p>Sign in with your company account.</p>
        <button type="button" class="primary" onClick={signInWithProvider}>Sign in</button>
      </section>
    </main>
  );
}

function SignIn({ onSignedIn, failed }) {
  const [key, setValue] = useState('');
  const [error, setError] = useState(failed ? 'The key was refused.' : '');
  const submit = async (e) => {
    e.preventDefault();
    setKey(key.trim());
    try {
      await get('/context/chats');
      onSignedIn();
    } catch (err) {
      setKey('');
      setError(err instanceof ApiError && err.status === 401 ? 'The key was refused.' : err.message);
    }
  };
  return (
    <main class="signin">
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">contextgate</h1>
        <p>This gateway asks for a Context API key. It is kept for this browser tab only.</p>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="off" value={key} required
          onInput={(e) => setValue(e.currentTarget.value)} />
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" class="primary">Sign in</button>
      </form>
    </main>
  );
}

// The ids of the chats whose run in progress waits for an approval: the chat list carries each
// chat's live run and its status.
function chatsAwaitingApproval(chats) {
  return new Set(chats.filter((c) => c.live_run?.status === 'awaiting_approval').map((c) => c.id));
}

function App() {
  const [auth, setAuth] = useState('checking'); // checking | needed | refused | ok
  const [route, setRoute] = useState(routeOf());
  const [chats, setChats] = useState([]);
  const [error, setError] = useState('');
  const [waiting, setWaiting] = useState(new Set());
  const [operator, setOperator] = useState(false);
  const [oidc, setOidc] = useState(null); // null until /auth says whether people sign in here
  useEffect(() => { loadSession().then((s) => setOidc(s.oidc)).then(() => operatorAvailable().then(setOperator)); }, []);

  const loadChats = useCallback(async () => {
    try {
      const list = await get('/context/chats');
      setChats(list.data);
      setAuth('ok');
      setError('');
      setWaiting(chatsAwaitingApproval(list.data));
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setAuth(getKey() ? 'refused' : 'needed');
      else setError(err.message);
    }
  }, []);

  useEffect(() => {
    loadChats();
    const onHash = () => setRoute(routeOf());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [loadChats]);

  if (oidc === null) return <p class="loading">Loading…</p>;
  // The operator's pages have a key of their own (the admin key) or the session, whatever
  // /context asks.
  if (route.page === 'admin') return <Operator page={route.id} oidc={oidc} />;
  if (auth === 'checking') return error ? <p class="error" role="alert">{error}</p> : <p class="loading">Loading…</p>;
  if (auth !== 'ok') return oidc ? <ProviderSignIn /> : <SignIn failed={auth === 'refused'} onSignedIn={loadChats} />;
  const user = signedIn();
  // A viewer reads chats and starts none (a Context API key may do everything).
  const readOnly = user ? !mayChange(user.role) : false;

  const open = route.page === 'chat' && route.id;
  return (
    <div class={'layout' + (open || route.page === 'new' || route.page === 'playground' ? ' has-main' : '')}>
      <header class="topbar">
        <a class="brand" href="#/">contextgate</a>
        <a class="link push" href="#/playground">Playground</a>
        {operator && <a class="link" href="#/admin/keys">Operator</a>}
        {oidc && !user && <button type="button" class="link" onClick={signInWithProvider}>Sign in</button>}
        {user && <span class="who" title={user.user.email}>{user.user.name || user.user.email} · {user.role}</span>}
        {user && (
          <button type="button" class="link" onClick={() => signOut().then(() => setAuth('needed'))}>Sign out</button>
        )}
        {!user && getKey() && (
          <button type="button" class="link" onClick={() => { setKey(''); setAuth('needed'); }}>Sign out</button>
        )}
      </header>
      <nav class="sidebar" aria-label="Chats">
        <ChatList chats={chats} waiting={waiting} current={route.id} onChanged={loadChats} readOnly={readOnly} />
      </nav>
      <main class="main" id="main">
        {error && <p class="error" role="alert">{error}</p>}
        {route.page === 'new' && readOnly && <p class="notice" role="status">A viewer reads chats; only members start them.</p>}
        {route.page === 'new' && !readOnly && <NewChat onCreated={(chat) => { loadChats(); location.hash = '#/chat/' + encodeURIComponent(chat.id); }} />}
        {open && <ChatView key={route.id} chatId={route.id} onChanged={loadChats} readOnly={readOnly} />}
        {route.page === 'playground' && <Playground />}
        {!open && route.page !== 'new' && route.page !== 'playground' && (
          <section class="empty">
            <h1>Chats with an agent that works in your workspace</h1>
            {readOnly ? <p>Pick a chat on the left to read it.</p>
              : <p>Pick a chat on the left, or <a href="#/new">start a new one</a>.</p>}
          </section>
        )}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app'));
