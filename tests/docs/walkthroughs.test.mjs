// The docs' walkthroughs run as written: the fenced blocks a marker names are taken from the
// Markdown and run in order with bash, against the built gateway and the bundled fake upstream,
// and what the docs say happens is checked. A doc change that breaks a walkthrough fails here.
//
// A marker is an HTML comment (invisible on GitHub) on the line before a fenced block:
//
//   <!-- walkthrough: NAME [terminal=N] [until="TEXT"] [expect="TEXT"] [file=PATH] [output] -->
//
//   (no attribute)  the block is typed into terminal 1 of walkthrough NAME, after the blocks
//                   marked before it in the same file; it must end with status 0
//   terminal=N      typed into terminal N instead (a second terminal of the docs): a bash of its
//                   own, started with the walkthrough; variables and background jobs stay in it
//   until="TEXT"    the next block starts once this block's output shows TEXT (a block that waits
//                   for what a later one does, as a human waits for it); it must still end
//   expect="TEXT"   the block's output (stdout and stderr, its background jobs' included) holds
//                   TEXT; it may be given more than once
//   file=PATH       the block is a file's content, written to PATH (relative to the walkthrough's
//                   folder; `~/` is its home) where the docs tell the reader to save it
//   browser=STEPS url=URL
//                   a marker of its own, on no block: the steps the text around it describes,
//                   taken in Chromium at URL (browser_steps.mjs holds them; the docs' words are
//                   not code, so these are written by hand), once every terminal's block ended
//   output          the block is output shown in the docs for the block before it: each of its
//                   non-empty lines appears in that block's output, in order (`…` stands for any
//                   text within a line; an answer without a final newline runs into the next one)
//
// Blocks run with `set -euo pipefail`, so a failing command or an unset variable (a step that
// needs something from another terminal) fails the walkthrough. A marker the runner does not
// understand, or on a block it cannot run (a language other than sh, bash or shell, without
// file= or output), fails too: nothing marked is skipped. Each file lists the walkthroughs it
// must hold (WALKTHROUGHS below), so a marker deleted by accident, or one in a file not listed,
// fails as well.
//
// What the runner changes, and nothing else:
// - The folder. Each walkthrough runs in a scratch folder laid out as the repository's root (the
//   docs' commands are typed there): build/contextgate and build/tests/contextgate-fake-upstream
//   are the binaries under test, config/ is a copy of the repository's, and deploy/run.sh is the
//   real script without its install and build steps (the test's build is the one to run). HOME
//   is a scratch folder too, and `claude`, `codex`, `gemini` and `qwen` on PATH are the CLIs
//   tests/agents installs from npm, run offline (their telemetry and update checks off).
// - Ports, so that walkthroughs run in parallel with each other and with every other test: each
//   port of two digits or more a walkthrough names after `localhost:`, `127.0.0.1:` or `--port `
//   is replaced, wherever it appears in that walkthrough's blocks, markers and shown output and in
//   its copy of config/, by a free loopback port picked for this run (the same one for every
//   occurrence). Port 9, where nothing listens, stays.
// - `/tmp/`, in the same places, is the walkthrough's own scratch tmp folder.
// Every walkthrough has a time limit; its processes are killed and its folder removed at the end.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync,
  statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { browserSteps } from './browser_steps.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GATEWAY = resolve(process.env.CONTEXTGATE_BIN ?? join(ROOT, 'build/contextgate'));
const FAKE = resolve(process.env.FAKE_UPSTREAM_BIN ?? join(ROOT, 'build/tests/contextgate-fake-upstream'));
// Each walkthrough's time limit (node's own for the test is a little longer).
const WALKTHROUGH_TIMEOUT = Number(process.env.WALKTHROUGH_TIMEOUT_MS ?? 150_000);

// The walkthroughs each file must hold; a marker in a Markdown file not listed here fails too.
const WALKTHROUGHS = {
  'README.md': ['readme-fake', 'readme-demo'],
  'docs/providers.md': ['providers'],
  'docs/routing.md': ['routing'],
  'docs/operations.md': ['operations'],
};

// The CLIs tests/agents installs (its package.json), as the docs call them.
function cliCommands() {
  const require = createRequire(join(ROOT, 'tests/agents/package.json'));
  const where = (pkg) => {
    try {
      return dirname(require.resolve(`${pkg}/package.json`));
    } catch {
      throw new Error(`${pkg} is not installed: run npm ci in tests/agents (deploy/test.sh does)`);
    }
  };
  return {
    claude: [join(where('@anthropic-ai/claude-code-linux-x64'), 'claude')],
    codex: [join(where('@openai/codex-linux-x64'), 'vendor/x86_64-unknown-linux-musl/bin/codex')],
    gemini: [process.execPath, join(where('@google/gemini-cli'), 'bundle/gemini.js')],
    qwen: [process.execPath, join(where('@qwen-code/qwen-code'), 'cli.js')],
  };
}

// The marker's attributes: name=value, name="value with spaces", or a bare name.
function parseMarker(text, where) {
  const m = text.match(/^<!--\s*walkthrough:\s*([\w.-]+)(.*?)\s*-->$/);
  if (!m) return null;
  const marker = { name: m[1], terminal: '1', where };
  const attrs = /\s+([\w-]+)(?:=(?:"([^"]*)"|(\S+)))?/gy;
  const rest = m[2];
  let a;
  let end = 0;
  while ((a = attrs.exec(rest))) {
    const [, key, quoted, bare] = a;
    const value = quoted ?? bare;
    if (key === 'expect' && value !== undefined) marker.expect = [...(marker.expect ?? []), value];
    else if (['terminal', 'until', 'file', 'browser', 'url'].includes(key) && value !== undefined) marker[key] = value;
    else if (key === 'output' && value === undefined) marker.output = true;
    else throw new Error(`${where}: unknown walkthrough attribute \`${a[0].trim()}\``);
    end = attrs.lastIndex;
  }
  if (rest.slice(end).trim()) throw new Error(`${where}: cannot read the marker's \`${rest.slice(end).trim()}\``);
  return marker;
}

// The marked blocks of one Markdown file, in order: {name, terminal, until, expect, file, output,
// lang, text, where}.
function extract(file) {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks = [];
  let pending = null;
  for (let i = 0; i < lines.length; ++i) {
    const line = lines[i];
    if (line.trimStart().startsWith('<!-- walkthrough')) {
      if (pending) throw new Error(`${pending.where}: the marker is not followed by a fenced block`);
      const marker = parseMarker(line.trim(), `${file}:${i + 1}`);
      if (!marker) throw new Error(`${file}:${i + 1}: cannot read the marker`);
      // A browser step stands alone: the steps are the text around it.
      if (marker.browser) blocks.push({ ...marker, text: '' });
      else pending = marker;
      continue;
    }
    const fence = line.match(/^(\s*)(`{3,}|~{3,})\s*([\w-]*)/);
    if (fence) {
      const close = new RegExp(`^\\s*${fence[2][0]}{${fence[2].length},}\\s*$`);
      let j = i + 1;
      while (j < lines.length && !close.test(lines[j])) ++j;
      if (pending) {
        const indent = fence[1].length;
        const text = lines.slice(i + 1, j).map((l) => l.slice(Math.min(indent, l.search(/\S|$/)))).join('\n') + '\n';
        blocks.push({ ...pending, lang: fence[3], text });
      }
      pending = null;
      i = j;
      continue;
    }
    if (pending && line.trim()) throw new Error(`${pending.where}: the marker is not followed by a fenced block`);
  }
  if (pending) throw new Error(`${pending.where}: the marker is not followed by a fenced block`);
  for (const b of blocks) {
    if (b.browser) {
      if (!browserSteps[b.browser]) throw new Error(`${b.where}: no browser steps named \`${b.browser}\` in browser_steps.mjs`);
      if (!b.url) throw new Error(`${b.where}: a browser step needs the url= it opens`);
      continue;
    }
    const runnable = ['sh', 'bash', 'shell'].includes(b.lang);
    if (!b.file && !b.output && !runnable)
      throw new Error(`${b.where}: a \`${b.lang || 'plain'}\` block is neither run (sh, bash) nor a file= or output block`);
  }
  return blocks;
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

// The ports a walkthrough names, each mapped to a free one; and the function that rewrites a text
// (ports and /tmp/) for this run.
async function rewriter(blocks, scratchTmp) {
  const ports = new Map();
  const pattern = /(localhost:|127\.0\.0\.1:|--port\s+)(\d{2,5})\b/g;
  for (const b of blocks)
    for (const text of [b.text, b.until ?? '', b.url ?? '', ...(b.expect ?? [])])
      for (const m of text.matchAll(pattern)) if (!ports.has(m[2])) ports.set(m[2], String(await freePort()));
  return (text) => text
    .replace(pattern, (_, before, port) => before + (ports.get(port) ?? port))
    .replace(/(?<![\w.])\/tmp\//g, `${scratchTmp}/`);
}

// The scratch repository root a walkthrough types its commands in.
function layout(scratch, rewrite, clis) {
  const root = join(scratch, 'repo');
  mkdirSync(join(root, 'build/tests'), { recursive: true });
  symlinkSync(GATEWAY, join(root, 'build/contextgate'));
  symlinkSync(FAKE, join(root, 'build/tests/contextgate-fake-upstream'));
  cpSync(join(ROOT, 'config'), join(root, 'config'), { recursive: true });
  const walk = (d) => readdirSync(d).forEach((f) => {
    const p = join(d, f);
    if (statSync(p).isDirectory()) walk(p);
    else writeFileSync(p, rewrite(readFileSync(p, 'utf8')));
  });
  walk(join(root, 'config'));
  // deploy/run.sh without its install and build steps.
  mkdirSync(join(root, 'deploy'));
  const run = readFileSync(join(ROOT, 'deploy/run.sh'), 'utf8').split('\n')
    .filter((l) => !/^(deploy\/install-deps\.sh|cmake )/.test(l)).join('\n');
  assert.match(run, /exec build\/contextgate serve/, 'deploy/run.sh no longer ends by running build/contextgate serve');
  writeFileSync(join(root, 'deploy/run.sh'), run);
  chmodSync(join(root, 'deploy/run.sh'), 0o755);
  const bin = join(scratch, 'bin');
  mkdirSync(bin);
  for (const [name, argv] of Object.entries(clis)) {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec ${argv.map((a) => `'${a}'`).join(' ')} "$@"\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return { root, bin };
}

// Every terminal's process group is killed if this process is stopped (ctest's timeout): its
// jobs (gateways, fakes) would otherwise outlive it. The scratch folders go too.
const live = new Set();
const scratches = new Set();
function killAll() {
  for (const t of live) try { process.kill(-t.child.pid, 'SIGKILL'); } catch { /* gone */ }
  for (const d of scratches) rmSync(d, { recursive: true, force: true });
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => { killAll(); process.exit(1); });

// A terminal: a bash reading the blocks typed into it, in a process group of its own.
class Terminal {
  constructor(name, cwd, env) {
    this.name = name;
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(this);
    this.screen = '';
    this.current = null;
    this.exited = new Promise((done) => this.child.on('exit', (code, signal) => {
      this.exit = { code, signal };
      live.delete(this);
      this.current?.finish(code ?? 128);
      done();
    }));
    const seen = (data) => {
      this.screen += data;
      const block = this.current;
      if (!block) return;
      block.output += data;
      const done = block.output.match(new RegExp(`\n?${block.sentinel} (\\d+)\n`));
      if (done) {
        block.output = block.output.replace(done[0], '\n');
        block.finish(Number(done[1]));
      }
      block.onOutput?.();
    };
    this.child.stdout.on('data', seen);
    this.child.stderr.on('data', seen);
  }

  // Types `file`'s block; returns it: its `output` so far, `ended` (a promise) and its `status`
  // once it ended (its last command's, or the shell's when a failing command ended the shell).
  type(file, index) {
    const block = { output: '', sentinel: `__walkthrough_block_${index}_done`, status: null };
    block.ended = new Promise((done) => {
      block.finish = (status) => {
        if (block.status !== null) return;
        block.status = status;
        if (this.current === block) this.current = null;
        done();
      };
    });
    this.current = block;
    this.child.stdin.write(`source '${file}' </dev/null; __status=$?; echo; echo "${block.sentinel} $__status"\n`);
    return block;
  }
}

// Every non-empty line of `shown` appears in `actual`, in order (two may share an actual line: an
// answer without a final newline runs into the next); `…` stands for any text within a line.
// Returns the first line not found, or null.
function showsInOrder(actual, shown) {
  let at = 0;
  for (const want of shown.split('\n').filter((l) => l.trim())) {
    const re = new RegExp(want.trim().split('…').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*?'), 'g');
    re.lastIndex = at;
    const m = re.exec(actual);
    if (!m) return want;
    at = m.index + m[0].length;
  }
  return null;
}

// Runs the walkthrough; past WALKTHROUGH_TIMEOUT it fails with what each terminal showed, once
// its terminals are killed and its folder removed.
async function runWalkthrough(name, blocks, clis) {
  const terminals = new Map();
  let timer;
  let late = null;
  const walking = walk(name, blocks, clis, terminals);
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      late = new Error(`${name} did not finish in ${WALKTHROUGH_TIMEOUT / 1000} s; ` +
        [...terminals.values()].map((t) => `terminal ${t.name} showed:\n${t.screen}`).join('\n'));
      for (const t of terminals.values()) try { process.kill(-t.child.pid, 'SIGKILL'); } catch { /* gone */ }
      reject(late);
    }, WALKTHROUGH_TIMEOUT);
  });
  try {
    await Promise.race([walking, timeout]);
  } catch (error) {
    await walking.catch(() => {});
    throw late ?? error;
  } finally {
    clearTimeout(timer);
  }
}

async function walk(name, blocks, clis, terminals) {
  const scratch = mkdtempSync(join(tmpdir(), `contextgate-doc-${name}-`));
  scratches.add(scratch);
  const log = [];
  try {
    const tmp = join(scratch, 'tmp');
    const home = join(scratch, 'home');
    mkdirSync(tmp);
    mkdirSync(home);
    const rewrite = await rewriter(blocks, tmp);
    const { root, bin } = layout(scratch, rewrite, clis);
    const env = {
      PATH: `${bin}:${process.env.PATH}`, HOME: home, TMPDIR: tmp, LANG: 'C.UTF-8', TERM: 'dumb',
      USER: process.env.USER ?? 'user', SHELL: '/bin/bash',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1',
      NO_COLOR: '1', CI: '1',
    };
    const terminal = (n) => {
      if (!terminals.has(n)) terminals.set(n, new Terminal(n, root, env));
      return terminals.get(n);
    };
    const describe = (b, r) => `${b.where} (terminal ${b.terminal}):\n${b.text}--- output${r ? `, status ${r.status}` : ''}:\n${r?.output ?? ''}`;
    let previous = null;
    for (const [i, b] of blocks.entries()) {
      if (b.output) {
        assert.ok(previous, `${b.where}: an output block before any command`);
        previous.outputs.push({ ...b, text: rewrite(b.text) });
        continue;
      }
      if (b.browser) {
        for (const t of terminals.values()) if (t.current) await t.current.ended;
        await browserSteps[b.browser]({ url: rewrite(b.url), path: (p) => rewrite(p) });
        continue;
      }
      const text = rewrite(b.text);
      if (b.file) {
        const path = b.file.startsWith('~/') ? join(home, b.file.slice(2)) : resolve(root, rewrite(b.file));
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, text);
        continue;
      }
      const t = terminal(b.terminal);
      if (t.current) await t.current.ended;  // the terminal's previous block is still running
      if (t.exit) assert.fail(`terminal ${t.name} has ended (${JSON.stringify(t.exit)}) before ${b.where}:\n${t.screen}`);
      const file = join(scratch, `block-${i}.sh`);
      writeFileSync(file, `set -euo pipefail\n${text}`);
      const r = t.type(file, i);
      previous = { block: b, run: r, outputs: [] };
      log.push(previous);
      if (b.until) {
        const until = rewrite(b.until);
        await new Promise((done) => {
          const check = () => { if (r.output.includes(until) || r.status !== null) done(); };
          r.onOutput = check;
          check();
        });
        assert.ok(r.output.includes(until), `${b.where}: never showed \`${until}\`\n${describe(b, r)}`);
      } else {
        await r.ended;
      }
      if (r.status !== null) assert.equal(r.status, 0, `${b.where} failed\n${describe(b, r)}`);
    }
    for (const entry of log) {
      const { block: b, run: r } = entry;
      await r.ended;
      if (process.env.WALKTHROUGH_SHOW) console.log(describe(b, r));
      assert.equal(r.status, 0, `${b.where} failed\n${describe(b, r)}`);
      for (const text of (b.expect ?? []).map(rewrite))
        assert.ok(r.output.includes(text), `${b.where}: no \`${text}\` in its output\n${describe(b, r)}`);
      for (const o of entry.outputs) {
        const missing = showsInOrder(r.output, o.text);
        assert.equal(missing, null, `${o.where}: the output shown there, line \`${missing}\`, is not in the output of ${describe(b, r)}`);
      }
    }
  } finally {
    for (const t of terminals.values()) {
      try { process.kill(-t.child.pid, 'SIGKILL'); } catch { /* already gone */ }
      await t.exited;
    }
    rmSync(scratch, { recursive: true, force: true });
    scratches.delete(scratch);
  }
}

// The walkthroughs run side by side (each has its own ports and folders). ONLY=name runs one,
// WALKTHROUGH_SHOW=1 prints each block's output (to write the output a doc shows).
describe('docs walkthroughs', { concurrency: true }, () => {
  for (const tool of ['curl', 'jq'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      throw new Error(`the docs' walkthroughs need ${tool}: deploy/install-deps.sh installs it`);
  const clis = cliCommands();
  const markdown = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  for (const file of markdown) {
    const blocks = extract(file);
    const found = [...new Set(blocks.map((b) => b.name))];
    const names = WALKTHROUGHS[file] ?? [];
    if (!found.length && !names.length) continue;
    test(`${file} holds its walkthroughs`, () => assert.deepEqual([...found].sort(), [...names].sort()));
    for (const name of found.filter((n) => !process.env.ONLY || process.env.ONLY === n))
      test(`${file}: ${name} runs as written`, { timeout: WALKTHROUGH_TIMEOUT + 10_000 },
        () => runWalkthrough(name, blocks.filter((b) => b.name === name), clis));
  }
});
