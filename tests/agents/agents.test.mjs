// The real coding agents, installed from npm (package.json here) and run offline: each vendor's own
// CLI against the other vendors' models. Claude Code
// (`claude -p`, Anthropic Messages) against an OpenAI-compatible and a Gemini upstream, and in
// Bedrock mode (InvokeModel at /bedrock) against a Bedrock upstream and in Vertex mode
// (streamRawPredict at /vertex/v1) against a Vertex AI upstream, Codex
// (`codex exec`, OpenAI Responses) against an Anthropic, a Gemini and an OpenAI-compatible upstream
// without a Responses endpoint (`responses: translate`), Gemini CLI (`gemini -p`, Gemini's
// generateContent) against an OpenAI-compatible and an Anthropic upstream, and Qwen Code
// (Chat Completions) against Gemini, whose thought signatures it drops from the messages it
// sends back. Each does a plain answer and one tool round trip; the scripted fake model answers
// the second turn only when the tool's output reached it (`expect`), so a lost result fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { FAKE, GATEWAY, PROMPTS, dir, startAndWait } from '../e2e/support.mjs';

const require = createRequire(import.meta.url);
// The platform binaries the packages ship (their wrappers' install steps are not needed).
const CLAUDE = join(dirname(require.resolve('@anthropic-ai/claude-code-linux-x64/package.json')), 'claude');
const CODEX = join(dirname(require.resolve('@openai/codex-linux-x64/package.json')),
  'vendor/x86_64-unknown-linux-musl/bin/codex');
const QWEN = join(dirname(require.resolve('@qwen-code/qwen-code/package.json')), 'cli.js');
const GEMINI = join(dirname(require.resolve('@google/gemini-cli/package.json')), 'bundle/gemini.js');

const workspace = join(dir, 'agents-work');
mkdirSync(workspace, { recursive: true });
const file = join(workspace, 'hello.txt');
writeFileSync(file, 'hello from the file\n');

// Each with the gateway's own key for it (the agent's key never goes upstream).
const keyed = '\n    api_key: provider-key\n    auth: replace';
const upstreams = {
  openai: (port) => `provider: openai\n    base_url: http://127.0.0.1:${port}/v1${keyed}`,
  anthropic: (port) => `provider: anthropic\n    base_url: http://127.0.0.1:${port}${keyed}`,
  gemini: (port) => `provider: gemini\n    base_url: http://127.0.0.1:${port}/v1beta${keyed}`,
  // An OpenAI-compatible server without a Responses endpoint.
  'openai (responses: translate)': (port) =>
    `provider: openai\n    base_url: http://127.0.0.1:${port}/v1\n    responses: translate${keyed}`,
  // Signed with the keys the fake Bedrock knows (tests/support/fake_providers.hpp).
  bedrock: (port) => `provider: bedrock\n    region: us-east-1\n    base_url: http://127.0.0.1:${port}
    aws:
      access_key_id: AKIAFAKEBEDROCK00001
      secret_access_key: fakeBedrockSecretKey/0123456789abcdefghij`,
  // Its token from the metadata server below, which the fake Vertex checks.
  vertex: (port) => `provider: vertex\n    project: agents-project\n    location: us-east5
    base_url: http://127.0.0.1:${port}`,
};

// A GCE metadata server handing out the Vertex upstream's access token.
const vertexToken = 'ya29.agents-vertex-token';
const metadata = createServer((req, res) => {
  const ok = req.headers['metadata-flavor'] === 'Google' &&
    req.url.startsWith('/computeMetadata/v1/instance/service-accounts/default/token');
  if (!ok) { res.writeHead(404).end(); return; }
  res.writeHead(200, { 'Content-Type': 'application/json', 'Metadata-Flavor': 'Google' })
    .end(JSON.stringify({ access_token: vertexToken, expires_in: 3599, token_type: 'Bearer' }));
});
await new Promise((resolve) => metadata.listen(0, '127.0.0.1', resolve));
metadata.unref();

let serial = 0;
// The fake playing the model from `script`, and the gateway in front of it as `provider`.
async function gatewayFor(provider, script) {
  const name = `agents-${++serial}`;
  const scriptFile = join(dir, `${name}.json`);
  writeFileSync(scriptFile, JSON.stringify(script));
  const fake = await startAndWait(FAKE, ['--port', '0', '--script', scriptFile,
    ...(provider === 'vertex' ? ['--vertex-token', vertexToken] : [])], /listening on (\d+)/);
  const config = join(dir, `${name}.yaml`);
  writeFileSync(config, `server:
  listen: 127.0.0.1:0
  workers: 1
upstreams:
  - name: model
    ${upstreams[provider](fake.match[1])}
    models: ["*"]
context:
  data_dir: ${join(dir, name + '.data')}
  prompts_dir: ${PROMPTS}
`);
  // The Vertex upstream's token source finds the metadata server there (no key file).
  process.env.GCE_METADATA_HOST = `127.0.0.1:${metadata.address().port}`;
  const gateway = await startAndWait(GATEWAY, ['serve', '--config', config],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  return {
    base: `http://127.0.0.1:${gateway.match[1]}`,
    log: gateway.output,  // the gateway's log so far, access lines included
    stop: () => { gateway.child.kill('SIGKILL'); fake.child.kill('SIGKILL'); },
  };
}

// Runs `command` in the workspace with only `env` (and PATH), bounded in time.
function run(command, args, env) {
  const home = join(dir, `home-${++serial}`);
  mkdirSync(home, { recursive: true });
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: workspace,
      env: { PATH: process.env.PATH, HOME: home, ...env(home) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
  });
}

const claude = (base, model, prompt) => run(CLAUDE,
  ['-p', prompt, '--model', model, '--allowedTools', 'Read', '--output-format', 'json'],
  () => ({
    ANTHROPIC_BASE_URL: base,
    ANTHROPIC_API_KEY: 'sk-ant-client',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
  }));

// Claude Code in Bedrock mode: Bedrock's InvokeModelWithResponseStream at the gateway's /bedrock,
// without AWS credentials of its own (the gateway signs). It also asks for the inference
// profiles (Bedrock's control plane), which the gateway answers from its configuration.
const claudeBedrock = (base, model, prompt) => run(CLAUDE,
  ['-p', prompt, '--model', model, '--allowedTools', 'Read', '--output-format', 'json'],
  () => ({
    CLAUDE_CODE_USE_BEDROCK: '1',
    ANTHROPIC_BEDROCK_BASE_URL: `${base}/bedrock`,
    CLAUDE_CODE_SKIP_BEDROCK_AUTH: '1',
    AWS_REGION: 'us-east-1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
  }));

// Claude Code in Vertex mode: Vertex AI's streamRawPredict at the gateway's /vertex/v1, without
// Google credentials of its own (the gateway sends its token); the project and region it names
// are replaced by the upstream's.
const claudeVertex = (base, model, prompt) => run(CLAUDE,
  ['-p', prompt, '--model', model, '--allowedTools', 'Read', '--output-format', 'json'],
  () => ({
    CLAUDE_CODE_USE_VERTEX: '1',
    ANTHROPIC_VERTEX_BASE_URL: `${base}/vertex/v1`,
    CLAUDE_CODE_SKIP_VERTEX_AUTH: '1',
    ANTHROPIC_VERTEX_PROJECT_ID: 'the-agents-project',
    CLOUD_ML_REGION: 'europe-west1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
  }));

const codex = (base, model, prompt) => run(CODEX, ['exec', '--skip-git-repo-check', prompt],
  (home) => {
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(join(codexHome, 'config.toml'), `model = "${model}"
model_provider = "contextgate"

[model_providers.contextgate]
name = "contextgate"
base_url = "${base}/v1"
env_key = "CONTEXTGATE_KEY"
wire_api = "responses"
`);
    return { CODEX_HOME: codexHome, CONTEXTGATE_KEY: 'sk-client' };
  });

const qwen = (base, model, prompt) => run(process.execPath,
  [QWEN, '--auth-type', 'openai', '--approval-mode', 'yolo', prompt],
  () => ({ OPENAI_BASE_URL: `${base}/v1`, OPENAI_API_KEY: 'sk-client', OPENAI_MODEL: model,
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' }));

const gemini = (base, model, prompt) => run(process.execPath,
  [GEMINI, '-p', prompt, '-m', model, '--yolo'],
  (home) => {
    mkdirSync(join(home, '.gemini'), { recursive: true });
    writeFileSync(join(home, '.gemini', 'settings.json'),
      JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
    return { GEMINI_API_KEY: 'g-client', GOOGLE_GEMINI_BASE_URL: base, GEMINI_CLI_TRUST_WORKSPACE: 'true' };
  });

const agents = [
  { name: 'Claude Code', cli: claude, provider: 'openai', model: 'gpt-4o', tool: 'Read', args: { file_path: file } },
  { name: 'Claude Code', cli: claude, provider: 'gemini', model: 'gemini-2.5-pro', tool: 'Read', args: { file_path: file } },
  { name: 'Claude Code in Bedrock mode', cli: claudeBedrock, provider: 'bedrock',
    model: 'anthropic.claude-sonnet-4-5-20250929-v1:0', tool: 'Read', args: { file_path: file },
    // Each listing of the inference profiles it asked for was answered.
    check: (log) => {
      for (const line of log.match(/GET \/bedrock\/inference-profiles\S* \d+/g) ?? [])
        assert.match(line, / 200$/, log);
    } },
  { name: 'Claude Code in Vertex mode', cli: claudeVertex, provider: 'vertex',
    model: 'claude-sonnet-4-5@20250929', tool: 'Read', args: { file_path: file } },
  { name: 'Codex', cli: codex, provider: 'anthropic', model: 'claude-sonnet-4-5', tool: 'exec_command', args: { cmd: 'cat hello.txt' } },
  { name: 'Codex', cli: codex, provider: 'gemini', model: 'gemini-2.5-pro', tool: 'exec_command', args: { cmd: 'cat hello.txt' } },
  { name: 'Codex', cli: codex, provider: 'openai (responses: translate)', model: 'qwen3-coder', tool: 'exec_command', args: { cmd: 'cat hello.txt' } },
  { name: 'Gemini CLI', cli: gemini, provider: 'openai', model: 'gpt-4o', tool: 'read_file', args: { file_path: file } },
  { name: 'Gemini CLI', cli: gemini, provider: 'anthropic', model: 'claude-sonnet-4-5', tool: 'read_file', args: { file_path: file } },
  // After an answer without calls Qwen Code asks the model who speaks next (its side request).
  { name: 'Qwen Code', cli: qwen, provider: 'gemini', model: 'gemini-2.5-pro', tool: 'read_file', args: { file_path: file },
    after: ['{"reasoning": "The answer is complete.", "next_speaker": "user"}'] },
];

for (const a of agents) {
  test(`${a.name} gets a plain answer from an upstream of ${a.provider}`, async () => {
    const g = await gatewayFor(a.provider, [`Plain answer from ${a.provider}.`, ...(a.after ?? [])]);
    try {
      const r = await a.cli(g.base, a.model, 'Say something.');
      assert.equal(r.code, 0, r.out + r.err);
      assert.ok(r.out.includes(`Plain answer from ${a.provider}.`), r.out + r.err);
      a.check?.(g.log());
    } finally {
      g.stop();
    }
  });

  test(`${a.name} completes a tool round trip with an upstream of ${a.provider}`, async () => {
    const g = await gatewayFor(a.provider, [
      { content: '', calls: [{ name: a.tool, arguments: JSON.stringify(a.args) }] },
      { content: 'The file says: hello from the file.', expect: 'hello from the file' },
      ...(a.after ?? []),
    ]);
    try {
      const r = await a.cli(g.base, a.model, 'What does hello.txt say?');
      assert.equal(r.code, 0, r.out + r.err);
      assert.match(r.out, /The file says: hello from the file\./);
    } finally {
      g.stop();
    }
  });
}
