// Black-box: `contextgate prices import` on LiteLLM's real price map (tests/data/litellm), its
// report and exit statuses, and the table it writes named by `pricing.file`: check-config reads
// it and a gateway charges its prices (docs/operations.md, "Prices and cost").
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAKE, GATEWAY, dir, startAndWait, writeConfig } from './support.mjs';

process.env.E2E_UPSTREAM_KEY ??= 'sk-upstream-e2e';  // writeConfig's upstream key

const MAP = fileURLToPath(new URL('../data/litellm/model_prices_and_context_window.json', import.meta.url));

function contextgate(...args) {
  return spawnSync(GATEWAY, args, { encoding: 'utf8', timeout: 30000 });
}

const running = [];
after(() => running.forEach((p) => p.child.kill('SIGKILL')));

test('prices import writes the table and says what it left out, and why', () => {
  const out = join(dir, 'litellm-prices.yaml');
  const run = contextgate('prices', 'import', MAP, '--out', out, '--date', '2025-11-01');
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /168 of its 1708 entries of .* taken into .*litellm-prices\.yaml, dated 2025-11-01 \(given by --date\)/);
  assert.match(run.stderr, /\n {2}1483 of providers not taken \(--providers openai,text-completion-openai,anthropic,gemini\): bedrock 185, azure 124,/);
  assert.match(run.stderr, /\n {2}55 of the providers taken, no text model by its mode: image_generation 32,/);
  assert.match(run.stderr, /\n {2}1 without both input_cost_per_token and output_cost_per_token\n/);
  assert.match(run.stderr, /\n {2}14 kept at \$0 input and output/);
  const table = readFileSync(out, 'utf8');
  assert.match(table, /^date: "2025-11-01"$/m);
  assert.match(table, /^ {2}- \{model: "gpt-4o", source: "litellm model_prices_and_context_window.json", input: 2\.5, output: 10, cache_read: 1\.25\}$/m);
  assert.match(table, /^ {2}- \{model: "claude-haiku-4-5", .*cache_read: 0\.1, /m);

  // To stdout, dated by the file's modification day.
  const copy = join(dir, 'map-copy.json');
  copyFileSync(MAP, copy);
  utimesSync(copy, new Date('2024-03-05T12:00:00Z'), new Date('2024-03-05T12:00:00Z'));
  const dated = contextgate('prices', 'import', copy);
  assert.equal(dated.status, 0, dated.stderr);
  assert.match(dated.stdout, /^date: "2024-03-05"$/m);
  assert.match(dated.stderr, /dated 2024-03-05 \(the file's modification day; --date sets it\)/);
});

test('prices import refuses what is not the map, naming the line and column', () => {
  const broken = join(dir, 'broken.json');
  writeFileSync(broken, '{\n  "gpt-4o": {"litellm_provider": "openai",, "mode": "chat"}\n}\n');
  const bad = contextgate('prices', 'import', broken);
  assert.equal(bad.status, 1);
  assert.equal(bad.stderr, `contextgate prices: ${broken}:2:43: not JSON: syntax error\n`);
  const list = join(dir, 'list.json');
  writeFileSync(list, '[{"litellm_provider": "openai"}]');
  const notMap = contextgate('prices', 'import', list);
  assert.equal(notMap.status, 1);
  assert.match(notMap.stderr, /list\.json:1:1: not LiteLLM's price map: the file holds an array/);
  const none = contextgate('prices', 'import', MAP, '--providers', 'no-such-provider');
  assert.equal(none.status, 1);
  assert.match(none.stderr, /no price was kept \(0 of its 1708 entries\)/);
  assert.equal(contextgate('prices', 'import', join(dir, 'missing.json')).status, 1);
  assert.equal(contextgate('prices', 'import').status, 2);
  assert.equal(contextgate('prices', 'import', MAP, '--date', 'yesterday').status, 2);
  assert.equal(contextgate('prices').status, 2);
});

test('the imported table, named by pricing.file, prices requests', async () => {
  const table = join(dir, 'imported.yaml');
  const made = contextgate('prices', 'import', MAP, '--out', table, '--date', '2025-11-01');
  assert.equal(made.status, 0, made.stderr);
  const fake = await startAndWait(FAKE, ['--port', '0'], /listening on (\d+)/);
  running.push(fake);
  const config = writeConfig('imported-prices.yaml', fake.match[1], `pricing:\n  file: ${table}\n`);
  const checked = contextgate('check-config', '--config', config);
  assert.equal(checked.status, 0, checked.stderr);
  assert.match(checked.stdout, /168 price\(s\) of 2025-11-01/);
  const gateway = await startAndWait(GATEWAY, ['serve', '--config', config],
    /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  running.push(gateway);
  // gpt-4-turbo is not in the shipped table; LiteLLM's 10 in and 30 out: 9 x 10 + 12 x 30.
  const answer = await fetch(`http://127.0.0.1:${gateway.match[1]}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-e2e' },
    body: JSON.stringify({ model: 'gpt-4-turbo', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get('x-contextgate-cost-usd'), '0.00045');
});
