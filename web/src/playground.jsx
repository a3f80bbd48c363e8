// The playground: one prompt to any model the gateway serves, through its public /v1 face
// (POST /v1/chat/completions, streamed), with what the answer cost and who gave it: the tokens
// (when the upstream reports usage), the time to the first token and in all, and the upstream a
// route chose (x-contextgate-upstream).
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get } from './api.js';
import { sseParser } from './sse.js';
import { Markdown } from './chat.jsx';

const ms = (t) => `${Math.round(t).toLocaleString('en-US')} ms`;

export function Playground() {
  const [models, setModels] = useState([]);
  const [model, setModel] = useState('');
  const [key, setKey] = useState('');
  const [prompt, setPrompt] = useState('');
  const [answer, setAnswer] = useState('');
  const [stats, setStats] = useState(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const stop = useRef(null);

  useEffect(() => {
    get('/v1/models', { auth: false }).then((r) => {
      const ids = (r?.data ?? []).map((m) => m.id).filter(Boolean);
      setModels(ids);
      setModel((m) => m || ids[0] || '');
    }).catch(() => {});
    return () => stop.current?.abort();
  }, []);

  const send = async (e) => {
    e.preventDefault();
    if (busy || !model.trim() || !prompt.trim()) return;
    setBusy(true);
    setAnswer('');
    setError('');
    const abort = new AbortController();
    stop.current = abort;
    const started = performance.now();
    const seen = { upstream: null, attempts: null, firstToken: null, total: null, usage: null, finish: null };
    setStats({ ...seen });
    try {
      const headers = { 'content-type': 'application/json' };
      // /v1 goes upstream: only a key typed here is sent, never the console's Context API key.
      if (key.trim()) headers.authorization = 'Bearer ' + key.trim();
      const res = await fetch('/v1/chat/completions', {
        method: 'POST',
        headers,
        signal: abort.signal,
        body: JSON.stringify({ model: model.trim(), messages: [{ role: 'user', content: prompt }], stream: true,
          stream_options: { include_usage: true } }),
      });
      seen.upstream = res.headers.get('x-contextgate-upstream');
      seen.attempts = res.headers.get('x-contextgate-attempts');
      if (!res.ok) {
        const body = await res.json().catch(() => null);
        throw new ApiError(res.status, body);
      }
      let text = '';
      const feed = sseParser(({ data }) => {
        if (data === '[DONE]') return;
        let chunk;
        try { chunk = JSON.parse(data); } catch { return; }
        if (chunk.error) throw new Error(chunk.error.message ?? 'The stream ended with an error.');
        if (chunk.usage) seen.usage = chunk.usage;
        const choice = chunk.choices?.[0];
        if (choice?.finish_reason) seen.finish = choice.finish_reason;
        const piece = choice?.delta?.content;
        if (piece) {
          if (seen.firstToken === null) seen.firstToken = performance.now() - started;
          text += piece;
          setAnswer(text);
        }
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        feed(value);
        setStats({ ...seen });
      }
    } catch (err) {
      if (!abort.signal.aborted) setError(err instanceof ApiError ? `${err.status}: ${err.message}` : err.message);
    } finally {
      seen.total = performance.now() - started;
      setStats({ ...seen });
      setBusy(false);
    }
  };

  return (
    <section class="panel playground" aria-labelledby="playground-title">
      <h1 id="playground-title">Playground</h1>
      <p class="muted">One prompt to a model through <code>/v1/chat/completions</code>, as any client sends it.</p>
      <form onSubmit={send}>
        <label for="pg-model">Model</label>
        <input id="pg-model" list="pg-models" required autocomplete="off" value={model}
          onInput={(e) => setModel(e.currentTarget.value)} />
        <datalist id="pg-models">{models.map((m) => <option key={m} value={m} />)}</datalist>
        <label for="pg-key">API key for /v1 <span class="muted">(optional: when the gateway or the upstream asks for one; not kept)</span></label>
        <input id="pg-key" type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <label for="pg-prompt">Prompt</label>
        <textarea id="pg-prompt" rows={4} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)}
          onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send(e); }} />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !model.trim() || !prompt.trim()}>Send</button>
          {busy && <button type="button" class="danger" onClick={() => stop.current?.abort()}>Stop</button>}
        </div>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      {(answer || busy) && (
        <div class="message assistant" aria-busy={busy ? 'true' : 'false'}>
          <span class="who">{model}</span>
          <Markdown text={answer} />
        </div>
      )}
      {stats && (
        <dl class="pg-stats" aria-label="How the answer came">
          <dt>Upstream</dt><dd data-stat="upstream">{stats.upstream ? `${stats.upstream}${Number(stats.attempts) > 1 ? ` (${stats.attempts} attempts)` : ''}` : 'not named (no route took the request)'}</dd>
          <dt>First token</dt><dd data-stat="first-token">{stats.firstToken === null ? '—' : ms(stats.firstToken)}</dd>
          <dt>In all</dt><dd data-stat="total">{stats.total === null ? 'streaming…' : ms(stats.total)}</dd>
          <dt>Tokens</dt><dd data-stat="tokens">{stats.usage
            ? `${stats.usage.prompt_tokens ?? '?'} in, ${stats.usage.completion_tokens ?? '?'} out`
            : stats.total === null ? '—' : 'not reported by the upstream'}</dd>
        </dl>
      )}
    </section>
  );
}
