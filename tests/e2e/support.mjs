// Shared by the e2e tests: the binaries, a scratch folder, starting processes, configs, and a
// Context API client (requests, a run's event stream).
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const GATEWAY = process.env.CONTEXTGATE_BIN ?? '../../build/contextgate';
export const FAKE = process.env.FAKE_UPSTREAM_BIN ?? '../../build/tests/contextgate-fake-upstream';
export const PROMPTS = fileURLToPath(new URL('../../prompts', import.meta.url));
export const dir = mkdtempSync(join(tmpdir(), 'contextgate-e2e-'));

// Starts a process and resolves with the first match of `pattern` in its output (bounded).
export function startAndWait(command, args, pattern, stream = 'stdout') {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command}: no ${pattern} in: ${seen}`)), 10_000);
    child[stream].on('data', (data) => {
      seen += data;
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, output: () => seen });
      }
    });
    child.on('exit', (code) => reject(new Error(`${command} exited with ${code}: ${seen}`)));
  });
}

// Resolves once `condition()` holds, checking as output arrives; gives up after `ms`.
export function until(condition, ms) {
  const deadline = Date.now() + ms;
  return new Promise((resolve) => {
    const check = () => (condition() || Date.now() > deadline ? resolve() : setTimeout(check, 5));
    check();
  });
}

// A gateway config in the scratch folder: one fake upstream, its own data_dir, the shipped
// prompts, and `extra` YAML appended (a `context:` section replaces the default one).
export function writeConfig(name, upstreamPort, extra = '') {
  const path = join(dir, name);
  const context = extra.includes('context:') ? '' : `context:
  data_dir: ${join(dir, name + '.data')}
  prompts_dir: ${PROMPTS}
`;
  writeFileSync(path, `server:
  listen: 127.0.0.1:0
  workers: 2
  drain_time: 5s
upstreams:
  - name: fake
    base_url: http://127.0.0.1:${upstreamPort}/v1
    api_key: \${E2E_UPSTREAM_KEY}
    models: ["*"]
${context}${extra}`);
  return path;
}

// Processes started by the helpers below; killed when the test file ends, and the scratch
// folder removed with them (a test run leaves nothing in /tmp).
const started = [];
after(() => {
  started.forEach((c) => c.kill('SIGKILL'));
  rmSync(dir, { recursive: true, force: true });
});

// The fake upstream playing the model from `script` (its replies in order); resolves its port.
export async function startScriptedFake(script) {
  const file = join(dir, `script-${Math.random()}.json`);
  writeFileSync(file, JSON.stringify(script));
  const fake = await startAndWait(FAKE, ['--port', '0', '--script', file], /listening on (\d+)/);
  started.push(fake.child);
  return fake.match[1];
}

// Starts the gateway on `config`; `failpoint` names where it kills itself (see
// docs/architecture.md). Resolves with its base URL and a promise of how it exited.
export function startGateway(config, failpoint) {
  const env = { ...process.env };
  if (failpoint) env.CONTEXTGATE_FAILPOINT = failpoint;
  const child = spawn(GATEWAY, ['serve', '--config', config], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  started.push(child);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.on('data', (d) => {
      seen += d;
      const match = seen.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (match) resolve({ child, exited, base: `http://127.0.0.1:${match[1]}`, output: () => seen });
    });
    child.on('exit', (code) => reject(new Error(`gateway exited ${code}: ${seen}`)));
  });
}

// A JSON request to the gateway (with the Context API `key` when given): its status and parsed
// answer.
export async function api(base, method, path, body, { key } = {}) {
  const headers = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(base + path, {
    method, headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

// The run's events (each its data with its `id`) after `lastEventId`, until `stop(event)`, the
// run's end, or the end of the stream.
export async function runEvents(base, runId, { stop = () => false, lastEventId = 0, key } = {}) {
  const headers = {};
  if (lastEventId) headers['last-event-id'] = String(lastEventId);
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${base}/context/runs/${runId}/events`, {
    headers, signal: AbortSignal.timeout(15_000),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const seen = [];
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return seen;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name) => frame.split('\n').find((l) => l.startsWith(name + ': '))?.slice(name.length + 2);
      const data = field('data');
      if (!data) continue;
      const event = { ...JSON.parse(data), id: Number(field('id')) };
      seen.push(event);
      if (stop(event) || ['run.completed', 'run.failed', 'run.cancelled'].includes(event.type)) {
        await reader.cancel();
        return seen;
      }
    }
  }
}
