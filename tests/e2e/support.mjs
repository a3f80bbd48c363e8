// Shared by the e2e tests: the binaries, a scratch folder, starting processes, configs.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
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
