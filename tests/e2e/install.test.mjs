// The gateway as an operator installs it: `cmake --install` into a prefix, started from `/` with
// a configuration file elsewhere. It finds its shipped prompts and workflows beside the binary
// and keeps relative paths relative to the configuration file; a configured folder that is
// missing or empty stops it at start.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dir, startAndWait } from './support.mjs';

const BUILD = process.env.CONTEXTGATE_BUILD_DIR ?? '../../build';
const prefix = join(dir, 'prefix');
const children = [];
after(() => children.forEach((c) => c.kill('SIGKILL')));

execFileSync('cmake', ['--install', BUILD, '--prefix', prefix], { stdio: 'ignore' });
const binary = join(prefix, 'bin', 'contextgate');

function config(name, context) {
  const folder = join(dir, 'etc-' + name);
  mkdirSync(folder, { recursive: true });
  const path = join(folder, 'gateway.yaml');
  writeFileSync(path, `server:
  listen: 127.0.0.1:0
  workers: 1
upstreams:
  - name: unused
    base_url: http://127.0.0.1:9/v1
context:
${context}
`);
  return { folder, path };
}

function runToEnd(args) {
  return new Promise((resolve) => {
    const child = spawn(binary, args, { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stderr.on('data', (d) => { output += d; });
    child.on('exit', (code) => resolve({ code, output }));
  });
}

test('an installed gateway started from / serves the shipped prompts and workflows', async () => {
  const { folder, path } = config('installed', '  data_dir: data');
  const gw = await new Promise((resolve, reject) => {
    const child = spawn(binary, ['serve', '--config', path], { cwd: '/', stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(child);
    let seen = '';
    child.stderr.on('data', (d) => {
      seen += d;
      const match = seen.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (match) resolve({ base: `http://127.0.0.1:${match[1]}`, line: seen });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${seen}`)));
  }).then(({ base, line }) => {
    // The start line names the console's address, the first page a new user opens.
    assert.match(line, new RegExp(`console at ${base.replace(/[.]/g, '\\.')}/console`));
    return base;
  });
  const prompts = await (await fetch(`${gw}/v1/system-prompts`)).json();
  assert.deepEqual(prompts.data.map((p) => p.id).sort(), ['coding', 'writing']);
  const workflows = await (await fetch(`${gw}/context/workflows/categories`)).json();
  assert.equal(workflows.data.reduce((n, c) => n + c.workflows, 0), 6);
  // data_dir is relative to the configuration file, not to the working directory.
  assert.ok(existsSync(join(folder, 'data', 'contextgate.db')));
});

test('a configured prompts or workflows folder that is missing or empty stops the start', async () => {
  const missing = config('missing', '  data_dir: data\n  prompts_dir: nowhere');
  const a = await runToEnd(['serve', '--config', missing.path]);
  assert.equal(a.code, 1, a.output);
  assert.match(a.output, /context\.prompts_dir: .*etc-missing\/nowhere is not a folder/);

  const empty = config('empty', '  data_dir: data\n  prompts_dir: prompts');
  mkdirSync(join(empty.folder, 'prompts'), { recursive: true });
  const b = await runToEnd(['check-config', '--config', empty.path]);
  assert.equal(b.code, 1, b.output);
  assert.match(b.output, /holds no prompt/);

  const noWorkflows = config('noflows', '  data_dir: data\n  workflows_dir: flows');
  const c = await runToEnd(['serve', '--config', noWorkflows.path]);
  assert.equal(c.code, 1, c.output);
  assert.match(c.output, /flows/);
});
