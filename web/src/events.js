// Follows a run's event stream with fetch (EventSource cannot send the API key) and resumes it
// with Last-Event-ID whenever it breaks: a dropped network, a sleeping laptop, a gateway
// restart. Events at or below the last id seen are dropped, so nothing is shown twice; the
// gateway replays everything after that id, so nothing is missed.
import { authHeaders } from './api.js';
import { sseParser } from './sse.js';
import { FINAL } from './run.js';

// No byte for this long (the gateway sends a keep-alive every 15 s): the connection is dead.
const SILENCE_MS = 45_000;

// onEvent(event) for each new event (its data with `id`); onState('live' | 'reconnecting' |
// 'ended' | 'error', detail). Returns stop().
export function followRun(runId, { from = 0, onEvent, onState = () => {} }) {
  let last = from;
  let stopped = false;
  let current = null; // the AbortController of the connection in progress
  let wake = null; // resolves the backoff sleep early
  const sleep = (ms) => new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => { clearTimeout(timer); resolve(); };
  });
  const retryNow = () => {
    if (wake) wake();
    else if (current) current.abort();
  };
  const onVisible = () => { if (document.visibilityState === 'visible') retryNow(); };
  window.addEventListener('online', retryNow);
  document.addEventListener('visibilitychange', onVisible);

  const once = async () => {
    const controller = new AbortController();
    current = controller;
    let silence = setTimeout(() => controller.abort(), SILENCE_MS);
    let ended = false;
    try {
      const res = await fetch(`/context/runs/${encodeURIComponent(runId)}/events`, {
        headers: authHeaders(last ? { 'last-event-id': String(last), accept: 'text/event-stream' } : { accept: 'text/event-stream' }),
        signal: controller.signal,
        cache: 'no-store',
      });
      if (!res.ok) {
        const body = await res.json().catch(() => null);
        const message = body?.error?.message ?? `HTTP ${res.status}`;
        // 429 (too many watchers) and 5xx may clear; the rest will not.
        return { retry: res.status === 429 || res.status >= 500, message };
      }
      onState('live');
      connected = true;
      const parse = sseParser((frame) => {
        let data;
        try {
          data = JSON.parse(frame.data);
        } catch {
          return;
        }
        const id = Number(frame.id);
        if (!(id > last)) return;
        last = id;
        onEvent({ ...data, id });
        if (FINAL.has(data.type)) ended = true;
      });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done || stopped) break;
        clearTimeout(silence);
        silence = setTimeout(() => controller.abort(), SILENCE_MS);
        parse(decoder.decode(value, { stream: true }));
        if (ended) {
          controller.abort();
          break;
        }
      }
    } catch (error) {
      if (stopped) return { retry: false };
      return { retry: true, message: String(error?.message ?? error) };
    } finally {
      clearTimeout(silence);
      current = null;
    }
    return ended ? { ended: true } : { retry: true, message: 'The event stream closed.' };
  };

  let connected = false;
  (async () => {
    let delay = 250;
    while (!stopped) {
      connected = false;
      const outcome = await once();
      if (connected) delay = 250;
      if (stopped) break;
      if (outcome.ended) {
        onState('ended');
        break;
      }
      if (!outcome.retry) {
        onState('error', outcome.message);
        break;
      }
      onState('reconnecting', outcome.message);
      await sleep(delay);
      wake = null;
      delay = Math.min(delay * 2, 4000);
    }
  })();

  return () => {
    stopped = true;
    window.removeEventListener('online', retryNow);
    document.removeEventListener('visibilitychange', onVisible);
    if (wake) wake();
    if (current) current.abort();
  };
}
