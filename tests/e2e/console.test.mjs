// The web console in a real browser: Debian's Chromium driven by playwright-core, against the
// real gateway binary and the scripted fake model. Screenshots go to the build folder and are
// checked not to be blank.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createConnection, createServer } from 'node:net';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { PROMPTS, api, dir, runEvents, startGateway, startScriptedFake, writeConfig } from './support.mjs';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const SHOTS = process.env.CONSOLE_SCREENSHOTS ?? fileURLToPath(new URL('../../build/console-screenshots', import.meta.url));
const call = (tool, parameters) => JSON.stringify({ tool, parameters, terminate: false });
const WAIT = { timeout: 15_000 };

let browser;
before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Root in CI: no sandbox. The rest keeps Chromium off the (closed) network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});
after(() => browser?.close());

// A page that fails the test on any script error or Content-Security-Policy violation.
async function openPage(base, viewport = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push('pageerror: ' + e.message));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) page.problems.push('csp: ' + m.text());
  });
  // The console asks /admin whether it has operator pages; settled once that answer is handled.
  const probe = page.waitForResponse((r) => new URL(r.url()).pathname === '/admin/health', WAIT).catch(() => null);
  page.operatorProbed = async () => {
    await probe;
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
  };
  await page.goto(base + '/console/');
  return page;
}

// A screenshot saved under the build folder, with more than a handful of colours in it.
async function screenshot(page, name) {
  const file = join(SHOTS, name + '.png');
  await page.screenshot({ path: file });
  const probe = await browser.newPage();
  const colours = await probe.evaluate(async (b64) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const g = canvas.getContext('2d');
    g.drawImage(img, 0, 0);
    const data = g.getImageData(0, 0, img.width, img.height).data;
    const seen = new Set();
    for (let i = 0; i < data.length; i += 4 * 7) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return seen.size;
  }, readFileSync(file).toString('base64'));
  await probe.close();
  assert.ok(colours > 20, `${file} looks blank (${colours} colours)`);
}

// A TCP proxy in front of the gateway whose connections the test can cut and refuse: a dropped
// network, as the browser sees it.
async function startProxy(port) {
  const sockets = new Set();
  let refusing = false;
  const server = createServer((client) => {
    if (refusing) return client.destroy();
    const upstream = createConnection({ host: '127.0.0.1', port });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    cut() {
      refusing = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      refusing = false;
    },
  };
}

async function setup(name, script, extra = '') {
  const workspace = join(dir, name + '-ws');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'README.md'), 'hello teh world\n');
  const fakePort = await startScriptedFake(script);
  const config = writeConfig(name + '.yaml', fakePort, `context:
  data_dir: ${join(dir, name + '-data')}
  prompts_dir: ${PROMPTS}
  workspaces: ["${workspace}"]
${extra}`);
  const gw = await startGateway(config);
  return { gw, workspace };
}

async function newChat(page, { title, edits } = {}) {
  await page.getByRole('link', { name: 'New chat' }).click();
  if (title) await page.getByLabel(/^Title/).fill(title);
  await page.getByLabel('Model').fill('fake-model');
  if (edits === 'review') await page.getByLabel('Record suggestions for review').check();
  await page.getByRole('button', { name: 'Create chat' }).click();
  await page.getByRole('tab', { name: 'Conversation' }).waitFor(WAIT);
}

async function send(page, text) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

// Boxes that share any area (Playwright bounding boxes, in CSS pixels of the viewport).
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

// What is wrong with the layout of the diffs under `scope`, as seen in the page: a line-number
// cell drawn over its row's code, a number cut off by its cell, or the two numbers of an inline
// row not side by side (the console's own table padding once squeezed diff2html's cells so).
async function diffLayoutProblems(scope) {
  await scope.locator('.d2h-file-wrapper').first().waitFor(WAIT);
  return scope.evaluate((root) => {
    const problems = [];
    const rect = (e) => e.getBoundingClientRect();
    const covers = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
    for (const row of root.querySelectorAll('.d2h-diff-tbody tr')) {
      const code = [...row.querySelectorAll('.d2h-code-line-prefix, .d2h-code-line-ctn')].map(rect).filter((r) => r.width > 0);
      for (const cell of row.querySelectorAll('.d2h-code-linenumber, .d2h-code-side-linenumber')) {
        const c = rect(cell);
        if (code.some((r) => covers(c, r))) problems.push(`line-number cell over the code: ${cell.textContent.trim()}`);
        if (cell.scrollWidth > cell.clientWidth + 1 || cell.scrollHeight > cell.clientHeight + 1)
          problems.push(`line-number cell overflows: ${cell.textContent.trim()}`);
        const numbers = [...cell.querySelectorAll('.line-num1, .line-num2')];
        for (const n of numbers) {
          const r = rect(n);
          if (n.textContent.trim() && (r.left < c.left - 0.5 || r.right > c.right + 0.5 || r.top < c.top - 0.5 || r.bottom > c.bottom + 0.5))
            problems.push(`line number ${n.textContent.trim()} cut off by its cell`);
        }
        if (numbers.length === 2 && Math.abs(rect(numbers[0]).top - rect(numbers[1]).top) > 1)
          problems.push(`line numbers ${cell.textContent.trim()} on two lines`);
      }
    }
    return problems;
  });
}

// A tap at the middle and at the lower edge of each button lands on it: nothing drawn over it.
async function assertButtonsClear(page, buttons) {
  const viewport = page.viewportSize();
  for (const button of await buttons.all()) {
    const b = await button.boundingBox();
    const name = await button.textContent();
    assert.ok(b.y >= 0 && b.y + b.height <= viewport.height, `${name} not fully on screen: ${JSON.stringify(b)}`);
    for (const y of [b.y + b.height / 2, b.y + b.height - 1]) {
      const hit = await page.evaluate(([x, y]) => {
        const e = document.elementFromPoint(x, y);
        return e?.closest('button')?.textContent ?? e?.outerHTML.slice(0, 80) ?? null;
      }, [b.x + b.width / 2, y]);
      assert.equal(hit, name, `at y=${y} of ${JSON.stringify(b)}`);
    }
  }
}

test('a chat: steps arrive, an approval edited before approving writes the edited text', async () => {
  const { gw, workspace } = await setup('console-edit', [
    call('read_file', { path: 'README.md' }),
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'the' }),
    'Fixed the typo.',
  ]);
  const page = await openPage(gw.base);
  // This gateway has no admin key: no link to operator pages that could not work.
  await page.getByRole('link', { name: 'New chat' }).waitFor(WAIT);
  await page.operatorProbed();
  assert.equal(await page.getByRole('link', { name: 'Operator' }).count(), 0);
  await newChat(page);
  await send(page, 'Fix the typo in README.md');

  const card = page.locator('section.approval');
  await page.locator('section.approval').waitFor(WAIT);
  // The step before it arrived and shows its phrase; the status line counts steps.
  await page.locator('.timeline .call', { hasText: 'Reading README.md' }).waitFor(WAIT);
  await page.getByRole('status').filter({ hasText: 'step 2/10' }).waitFor(WAIT);
  // The diff, rendered.
  await page.locator('section.approval .d2h-file-wrapper').waitFor(WAIT);
  assert.match(await page.locator('section.approval .diff').innerText(), /teh/);
  // The chat list marks the chat that waits for its human.
  const listed = page.locator('.chat-list li', { hasText: 'Fix the typo' });
  await listed.locator('.awaiting', { hasText: 'awaiting approval' }).waitFor(WAIT);
  await screenshot(page, 'approval-card');

  await page.getByRole('button', { name: 'Edit before approving' }).click();
  await page.getByLabel('replace', { exact: true }).fill('THE');
  await page.getByRole('button', { name: /Approve edited/ }).click();
  await page.getByText('Fixed the typo.').first().waitFor(WAIT);
  assert.equal(readFileSync(join(workspace, 'README.md'), 'utf8'), 'hello THE world\n');
  assert.equal(await card.count(), 0);
  await listed.locator('.awaiting').waitFor({ ...WAIT, state: 'detached' });

  // The finished run's steps, replayed on request.
  await page.getByRole('button', { name: /Show steps \(2 tool calls, completed\)/ }).click();
  await page.locator('.past-run .call', { hasText: 'Editing README.md' }).waitFor(WAIT);
  await page.locator('.past-run .call summary', { hasText: 'Editing README.md' }).click();
  assert.match(await page.locator('.past-run .call', { hasText: 'Editing README.md' }).innerText(), /Edited by the human[\s\S]*THE/);
  // The chat is named after its first message, and found by it.
  await page.getByLabel('Search chats by title').fill('typo');
  await page.getByRole('link', { name: /Fix the typo in README.md/ }).waitFor(WAIT);
  await page.getByLabel('Search chats by title').fill('nothing like it');
  await page.getByText('No chat matches.').waitFor(WAIT);
  await page.getByLabel('Search chats by title').fill('');
  await screenshot(page, 'chat-with-steps');

  // The phone layout: the chat alone, with a way back to the list.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('link', { name: 'Chats' }).click();
  await page.getByRole('link', { name: 'New chat' }).waitFor(WAIT);
  assert.deepEqual(page.problems, []);
});


const MARKDOWN_ANSWER = [
  '## Title',
  '',
  'Some **bold** words and [the docs](https://example.com/docs).',
  '',
  '<img src="x" onerror="window.__injected = 1"><script>window.__injected = 2</script>',
  '',
  '```cpp',
  'int main() { return 0; }',
  '```',
  '',
  // Long enough that the approval asked next lies at the bottom of a scrolled page.
  ...Array.from({ length: 12 }, (_, i) => `${i + 1}. A point worth making, number ${i + 1}.`),
].join('\n');

test('1280×800: an answer as Markdown (no raw HTML), then an approval whose buttons the message box leaves clear', async () => {
  const { gw } = await setup('console-markdown', [
    MARKDOWN_ANSWER,
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'the' }),
    'Fixed.',
  ]);
  const page = await openPage(gw.base);
  await newChat(page, { title: 'Markdown' });
  await send(page, 'Explain');
  const answer = page.locator('.message.assistant .markdown').first();
  await answer.getByRole('heading', { name: 'Title', level: 2 }).waitFor(WAIT);
  assert.equal(await answer.locator('strong').innerText(), 'bold');
  const link = answer.getByRole('link', { name: 'the docs' });
  assert.equal(await link.getAttribute('href'), 'https://example.com/docs');
  assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
  assert.equal(await link.getAttribute('target'), '_blank');
  const code = answer.locator('pre > code');
  assert.equal((await code.innerText()).trim(), 'int main() { return 0; }');
  assert.match(await code.evaluate((e) => getComputedStyle(e).fontFamily), /mono|Menlo|Consolas/i);
  assert.ok(await code.locator('.hljs-keyword').count() > 0, 'the code is highlighted');
  // The raw HTML is text: no element of it, nothing run.
  assert.equal(await answer.locator('img, script').count(), 0);
  assert.match(await answer.innerText(), /<img src="x" onerror=/);
  assert.equal(await page.evaluate(() => window.__injected), undefined);
  await screenshot(page, 'markdown-answer');

  await send(page, 'Fix the typo in README.md');
  const card = page.locator('section.approval');
  await card.locator('.d2h-file-wrapper').waitFor(WAIT);
  // Side by side at this width; the line numbers beside the code, not over it.
  assert.equal(await card.getByRole('button', { name: 'Side by side' }).getAttribute('aria-pressed'), 'true');
  assert.deepEqual(await diffLayoutProblems(card), []);
  // Where the page scrolled to by itself, every action is whole on screen and takes a click.
  await assertButtonsClear(page, card.locator('.actions button'));
  await screenshot(page, 'approval-after-answer');
  await card.getByRole('button', { name: 'Inline' }).click();
  assert.deepEqual(await diffLayoutProblems(card), []);
  await assertButtonsClear(page, card.locator('.actions button'));
  await card.getByRole('button', { name: /^Approve a$/ }).click();
  await page.getByText('Fixed.').first().waitFor(WAIT);
  assert.deepEqual(page.problems, []);
});

test('on a phone (390×844): the approval is reachable past the message box, the diff inline, every tab in reach', async () => {
  const { gw, workspace } = await setup('console-phone', [
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'the' }),
    'Fixed on the phone.',
  ]);
  const page = await openPage(gw.base, { width: 390, height: 844 });
  await newChat(page, { title: 'On the phone' });
  await send(page, 'Fix the typo in README.md');
  const card = page.locator('section.approval');
  await card.locator('.d2h-file-wrapper').waitFor(WAIT);
  // Inline is the default where side by side cannot fit.
  assert.equal(await card.locator('.d2h-file-side-diff').count(), 0);
  assert.equal(await card.getByRole('button', { name: 'Inline' }).getAttribute('aria-pressed'), 'true');
  // Every tab lies within the screen's width.
  for (const name of ['Conversation', 'Review', 'Workflows', 'Document']) {
    const box = await page.getByRole('tab', { name }).boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `${name}: ${JSON.stringify(box)}`);
  }
  // The approval's actions, scrolled to, are not under the message box, and a tap there lands
  // on them.
  const approve = card.getByRole('button', { name: /^Approve a$/ });
  await approve.scrollIntoViewIfNeeded();
  const composer = await page.locator('.composer').boundingBox();
  const actions = await card.locator('.actions').first().boundingBox();
  assert.ok(!composer || !overlap(composer, actions), `composer ${JSON.stringify(composer)} covers ${JSON.stringify(actions)}`);
  // Each line number whole, beside the code (the console's table padding once broke them).
  assert.deepEqual(await diffLayoutProblems(card), []);
  // The diff's line numbers scrolled with it (diff2html places them absolutely).
  const diffBox = await card.locator('.diff').boundingBox();
  for (const number of await card.locator('.d2h-code-linenumber').all()) {
    const b = await number.boundingBox();
    assert.ok(b.y >= diffBox.y && b.y + b.height <= diffBox.y + diffBox.height,
      `line number ${JSON.stringify(b)} outside the diff ${JSON.stringify(diffBox)}`);
  }
  // A tap at the middle of each action lands on it (nothing of the diff drawn over them).
  for (const button of await card.locator('.actions button').all()) {
    const b = await button.boundingBox();
    const hit = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest('button')?.textContent,
      [b.x + b.width / 2, b.y + b.height / 2]);
    assert.equal(hit, await button.textContent());
  }
  const box = await approve.boundingBox();
  await screenshot(page, 'phone-approval');
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await page.getByText('Fixed on the phone.').first().waitFor(WAIT);
  assert.equal(readFileSync(join(workspace, 'README.md'), 'utf8'), 'hello the world\n');
  assert.deepEqual(page.problems, []);
});

test('the operator pages: a key made with its limits, used, seen in usage and revoked; route health', async () => {
  const ADMIN = 'admin-key-0123456789abcdef';
  const { gw } = await setup('console-operator', ['Hello from the model.', 'And again.'], `admin:
  api_key: ${ADMIN}
routes:
  - model: smart
    targets: [{upstream: fake, model: fake-model}]
`);
  const page = await openPage(gw.base);
  // This gateway has an admin key: the chats' page links to the operator pages.
  await page.getByRole('link', { name: 'Operator' }).click();
  // The admin key, asked for once; a wrong one is refused.
  await page.getByLabel('Admin key').fill('not-the-admin-key-0000');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('The admin key was refused.').waitFor(WAIT);
  await page.getByLabel('Admin key').fill(ADMIN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('No keys yet.').waitFor(WAIT);
  // A key with its model globs and limits; its secret is shown once.
  await page.getByLabel('Name').fill('alice');
  await page.getByLabel('Models').fill('fake-*, smart');
  await page.getByLabel('Requests per minute').fill('60');
  await page.getByLabel('Token budget').fill('100000');
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = await page.getByLabel("The new key's secret").inputValue();
  assert.match(secret, /^sk-cg-[A-Za-z0-9_-]{43}$/);
  // Copied with one click.
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.base });
  await page.getByRole('button', { name: 'Copy the secret' }).click();
  await page.getByText('Copied.').waitFor(WAIT);
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
  const row = page.locator('table.keys tbody tr', { hasText: 'alice' });
  await row.waitFor(WAIT);
  assert.match(await row.innerText(), /fake-\*, smart[\s\S]*60\/min[\s\S]*0 \/ 100,000 a month/);
  // Used once through /v1, the key's usage shows on the page.
  const chat = (key) => fetch(gw.base + '/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key },
    body: JSON.stringify({ model: 'smart', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const used = await chat(secret);
  assert.equal(used.status, 200, await used.text());
  await page.reload();
  await row.locator('td', { hasText: /^1$/ }).first().waitFor(WAIT);
  await screenshot(page, 'operator-keys');
  // Usage: alice's request, to a model with no price (the Usage page's own test has dollars).
  await page.getByRole('link', { name: 'Usage' }).click();
  const aliceUsage = page.locator('table.top-key tbody tr', { hasText: 'alice' });
  await aliceUsage.waitFor(WAIT);
  assert.match(await aliceUsage.innerText(), /alice\s+no price\s+1\s/);
  // Health: the route's target, healthy after its success.
  await page.getByRole('link', { name: 'Health' }).click();
  const target = page.getByRole('region', { name: 'Route smart' }).locator('tbody tr');
  await target.waitFor(WAIT);
  assert.match(await target.innerText(), /fake\s+fake-model\s+healthy/);
  await screenshot(page, 'operator-health');
  // The request log follows requests as they finish, filtered by any text of theirs.
  await page.getByRole('link', { name: 'Request log' }).click();
  await page.getByRole('status').filter({ hasText: 'following' }).waitFor(WAIT);
  assert.equal((await chat(secret)).status, 200);
  const logged = page.locator('table.request-log tbody tr', { hasText: '/v1/chat/completions' });
  await logged.waitFor(WAIT);
  assert.match(await logged.innerText(), /POST \/v1\/chat\/completions\s+200[\s\S]*fake[\s\S]*smart/);
  // The key by its name, as the keys page shows it, not by its id.
  assert.equal(await logged.locator('td').nth(6).innerText(), 'alice');
  await page.getByLabel('Filter').fill('/admin/usage');  // nothing of the kind finished since
  await page.getByText('No request matches.').waitFor(WAIT);
  await page.getByLabel('Filter').fill('smart');
  await logged.waitFor(WAIT);
  await screenshot(page, 'operator-log');
  assert.equal((await fetch(gw.base + '/admin/log')).status, 401);  // the admin key, or nothing
  // On a phone the rows are cards: the log's key and the Revoke button in sight, no sideways
  // scroll.
  await page.setViewportSize({ width: 390, height: 844 });
  await logged.locator('td', { hasText: 'alice' }).waitFor(WAIT);
  await screenshot(page, 'operator-log-phone');
  // Revoked from the page: the key is refused at once.
  await page.getByRole('link', { name: 'Keys' }).click();
  const revoke = page.getByRole('button', { name: 'Revoke alice', exact: true });
  await revoke.waitFor(WAIT);
  const tableBox = await page.locator('table.keys').boundingBox();
  assert.ok(tableBox.x >= 0 && tableBox.x + tableBox.width <= 390, `the keys table is wider than the phone: ${JSON.stringify(tableBox)}`);
  const revokeBox = await revoke.boundingBox();
  assert.ok(revokeBox.x >= 0 && revokeBox.x + revokeBox.width <= 390, `Revoke off screen: ${JSON.stringify(revokeBox)}`);
  await revoke.scrollIntoViewIfNeeded();
  await assertButtonsClear(page, revoke);
  await screenshot(page, 'operator-keys-phone');
  await revoke.click();
  await page.getByRole('button', { name: 'Revoke alice?' }).click();
  await page.getByText('No keys yet.').waitFor(WAIT);
  assert.equal((await chat(secret)).status, 401);
  assert.deepEqual(page.problems, []);
});

// The Usage page in dollars: priced traffic through the gateway (an override prices `priced-*`
// at $2.00 in and $8.00 out per million tokens, so every cost is known), a model with no price,
// a usage the upstream did not report; the totals, the stacked chart, the rankings, a USD budget
// and the CSV export.
test('usage: spend by day stacked by model and by key, unpriced requests, a budget, the CSV export', async () => {
  const ADMIN = 'admin-key-0123456789abcdef';
  const fakePort = await startScriptedFake([]);
  const gw = await startGateway(writeConfig('console-usage.yaml', fakePort, `admin:
  api_key: ${ADMIN}
pricing:
  overrides:
    - {model: "priced-*", input: 2.00, output: 8.00}
`));
  const asAdmin = { authorization: 'Bearer ' + ADMIN, 'content-type': 'application/json' };
  const makeKey = async (body) => {
    const res = await fetch(gw.base + '/admin/keys', { method: 'POST', headers: asAdmin, body: JSON.stringify(body) });
    assert.equal(res.status, 201, await res.clone().text());
    return (await res.json()).key;
  };
  const alice = await makeKey({ name: 'alice' });
  // bob's key, with its USD budget, made on the Keys page.
  const page = await openPage(gw.base);
  await page.getByRole('link', { name: 'Operator' }).click();
  await page.getByLabel('Admin key').fill(ADMIN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Name').fill('bob');
  await page.getByLabel('USD budget').fill('10');
  await page.getByRole('button', { name: 'Create key' }).click();
  const bob = await page.getByLabel("The new key's secret").inputValue();
  const bobsKey = page.locator('table.keys tbody tr', { hasText: 'bob' });
  await bobsKey.waitFor(WAIT);
  assert.match(await bobsKey.innerText(), /\$0\.00 \/ \$10\.00 a month/);
  // The fake upstream reports the usage the x-fake-usage header gives (a streamed answer: none).
  const chat = async (key, model, usage, stream = false) => {
    const res = await fetch(gw.base + '/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key,
        'x-fake-usage': JSON.stringify({ prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] }) },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return res.text();
  };
  // alice: twice 1M in and 250K out of priced-big, $4.00 each; homegrown-1, which has no price,
  // once reported and once streamed without usage (estimated). bob: 250K in and 125K out of
  // priced-small, $1.50 (a key with a USD budget is refused a model with no price).
  await chat(alice, 'priced-big', [1_000_000, 250_000]);
  await chat(alice, 'priced-big', [1_000_000, 250_000]);
  await chat(alice, 'homegrown-1', [1_000, 1_000]);
  await chat(alice, 'homegrown-1', [0, 0], true);
  await chat(bob, 'priced-small', [250_000, 125_000]);

  await page.getByRole('link', { name: 'Usage' }).click();
  const total = (name) => page.locator(`[data-total=${name}] dd`);
  await total('usd').waitFor(WAIT);
  assert.equal(await total('usd').innerText(), '$9.50');
  assert.equal(await total('requests').innerText(), '5');
  assert.equal(await total('estimated').innerText(), '1');
  await page.getByText('The usage of 1 request was estimated: its upstream reported none.').waitFor(WAIT);
  // The unpriced requests stand out, with the model to price and where.
  assert.equal(await total('unpriced').innerText(), '2');
  assert.match(await page.locator('[data-total=unpriced]').getAttribute('class'), /alarm/);
  assert.match(await page.locator('.notice.unpriced').innerText(), /2 requests to homegrown-1 had no price[\s\S]*pricing\.overrides/);

  // The rankings: spend, requests, tokens; the unpriced model says so rather than $0.
  const ranking = async (by) => page.locator(`table.top-${by} tbody tr`).evaluateAll((rows) =>
    rows.map((r) => [...r.querySelectorAll('th, td')].map((c) => c.innerText)));
  const keys = await ranking('key');
  assert.deepEqual(keys.map((r) => r.slice(0, 3)), [['alice', '$8.00', '4'], ['bob', '$1.50', '1']]);
  assert.equal(keys[1][3], '375,000');  // alice's hold the estimate's too
  assert.deepEqual((await ranking('model')).map((r) => [r[0], r[1], r[2], r[6]]),
    [['priced-big', '$8.00', '2', '0'], ['priced-small', '$1.50', '1', '0'], ['homegrown-1', 'no price', '2', '2']]);

  // The chart: today's bar, priced-big stacked under priced-small, as drawn on the canvas, and
  // the same figures in its table.
  const today = new Date().toISOString().slice(0, 10);
  const canvas = page.locator('.usage-chart canvas');
  assert.match(await canvas.getAttribute('aria-label'), /Spend per day by model, .* to .*: \$9\.50 in all/);
  const stacking = () => canvas.evaluate((c) => {
    // The first two colours of the page's palette, found column by column.
    const want = { first: [0x00, 0x72, 0xb2], second: [0xe6, 0x9f, 0x00] };
    const { data, width, height } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    const seen = { first: 0, second: 0 };
    let stacked = 0;
    for (let x = 0; x < width; ++x) {
      const ys = { first: [], second: [] };
      for (let y = 0; y < height; ++y) {
        const at = (y * width + x) * 4;
        for (const [name, [r, g, b]] of Object.entries(want))
          if (data[at] === r && data[at + 1] === g && data[at + 2] === b && data[at + 3] === 255) ys[name].push(y);
      }
      seen.first += ys.first.length;
      seen.second += ys.second.length;
      // A column through the bar: the second series sits right on top of the first.
      if (ys.first.length && ys.second.length && Math.max(...ys.second) < Math.min(...ys.first)) ++stacked;
    }
    return { ...seen, stacked };
  });
  const drawn = await stacking();
  assert.ok(drawn.stacked > 5, JSON.stringify(drawn));
  // $8.00 against $1.50, in area (the legend's two boxes are the same size).
  assert.ok(drawn.first > drawn.second * 3, JSON.stringify(drawn));
  await screenshot(page, 'operator-usage');
  await page.getByText('The chart as a table').click();
  const tableRow = async () => page.locator('.chart-table tbody tr').evaluateAll((rows) =>
    rows.map((r) => [...r.querySelectorAll('th, td')].map((c) => c.innerText)));
  assert.deepEqual(await page.locator('.chart-table thead th').allInnerTexts(), ['Day', 'priced-big', 'priced-small', 'In all']);
  assert.deepEqual(await tableRow(), [[today, '$8.00', '$1.50', '$9.50']]);

  // By key, then in tokens.
  await page.getByRole('button', { name: 'Key', exact: true }).click();
  await page.getByRole('heading', { name: 'Spend per day by key' }).waitFor(WAIT);
  assert.deepEqual(await tableRow(), [[today, '$8.00', '$1.50', '$9.50']]);
  assert.deepEqual(await page.locator('.chart-table thead th').allInnerTexts(), ['Day', 'alice', 'bob', 'In all']);
  await page.getByRole('button', { name: 'Tokens' }).click();
  await page.getByRole('heading', { name: 'Tokens per day by key' }).waitFor(WAIT);
  assert.deepEqual((await tableRow())[0].slice(2, 3), ['375,000']);
  assert.equal(await page.getByRole('button', { name: 'Tokens' }).getAttribute('aria-pressed'), 'true');

  // bob's USD budget: $1.50 of $10.00 this month.
  const budget = page.locator('table.budgets tbody tr', { hasText: 'bob' });
  await budget.waitFor(WAIT);
  assert.match(await budget.innerText(), /bob\s+\$1\.50 this month\s+\$10\.00 a month\s+15%/);
  assert.equal(await budget.locator('meter').getAttribute('value'), '1.5');
  assert.equal(await page.locator('table.budgets tbody tr', { hasText: 'alice' }).count(), 0);

  // The CSV of the shown range, fetched with the admin key: what /admin/usage answers for it.
  await page.getByRole('button', { name: '7 days' }).click();
  await page.getByRole('heading', { name: 'Usage, the last 7 days' }).waitFor(WAIT);
  const from = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
  const [download] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('button', { name: 'Export CSV' }).click()]);
  assert.equal(download.suggestedFilename(), `usage-${from}-${today}.csv`);
  const csv = readFileSync(await download.path(), 'utf8');
  const direct = await fetch(`${gw.base}/admin/usage?group_by=day,key,model&from=${from}&to=${today}&format=csv`, { headers: asAdmin });
  assert.equal(csv, await direct.text());
  const lines = csv.trim().split(/\r?\n/);
  const head = lines[0].split(',');
  const rows = lines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [head[i], v])));
  assert.equal(rows.length, 3);
  const big = rows.find((r) => r.model === 'priced-big');
  assert.deepEqual([big.day, big.key_name, big.requests, Number(big.usd)], [today, 'alice', '2', 8]);
  const homegrown = rows.find((r) => r.model === 'homegrown-1');
  assert.deepEqual([homegrown.key_name, homegrown.unpriced_requests, homegrown.estimated_requests], ['alice', '2', '1']);

  // On a phone: the chart and the rankings within the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const part of ['.usage-chart', 'table.top-key', 'table.top-model', 'table.budgets']) {
    const box = await page.locator(part).boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `${part} is wider than the phone: ${JSON.stringify(box)}`);
  }
  await screenshot(page, 'operator-usage-phone');
  assert.deepEqual(page.problems, []);
});

// A beginner's configuration (upstreams, no routes): the Health page shows every upstream with its
// health and its last error, the one a request failed on included.
test('health: every upstream with its state and last error, in a route or not', async () => {
  const ADMIN = 'admin-key-0123456789abcdef';
  const fakePort = await startScriptedFake(['Hello.']);
  const path = join(dir, 'console-health.yaml');
  writeFileSync(path, `server:
  listen: 127.0.0.1:0
  workers: 2
upstreams:
  - name: unreachable
    base_url: http://127.0.0.1:1/v1
    models: ["gone-*"]
  - name: fake
    base_url: http://127.0.0.1:${fakePort}/v1
    models: ["*"]
health:
  cooldown: 60s
admin:
  api_key: ${ADMIN}
context:
  data_dir: ${join(dir, 'console-health-data')}
  prompts_dir: ${PROMPTS}
`);
  const gw = await startGateway(path);
  const failed = await fetch(gw.base + '/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gone-1', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(failed.status, 502);
  const page = await openPage(gw.base);
  await page.getByRole('link', { name: 'Operator' }).click();
  await page.getByLabel('Admin key').fill(ADMIN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Health' }).click();
  const upstreams = page.getByRole('region', { name: 'Upstreams' });
  const row = upstreams.locator('tbody tr', { hasText: 'unreachable' });
  await row.waitFor(WAIT);
  assert.match(await row.innerText(), /unreachable\s+openai\s+cooling for \d+ s[\s\S]*cannot connect to upstream 127\.0\.0\.1:1/);
  assert.equal(await row.locator('.badge').getAttribute('title'), 'It failed: routes skip it until its cooldown ends.');
  // Not yet used: unknown, not "healthy".
  assert.match(await upstreams.locator('tbody tr', { hasText: 'fake' }).innerText(), /fake\s+openai\s+unknown/);
  await page.getByText('No routes are configured').waitFor(WAIT);
  await screenshot(page, 'operator-health-upstreams');
  assert.deepEqual(page.problems, []);
});

test('the playground: a prompt to a route, the answer streamed as Markdown with its upstream and times', async () => {
  const { gw } = await setup('console-playground', ['Hello from **the playground**.',
    { content: 'The fake model is overloaded.', status: 503 }], `routes:
  - model: smart
    targets: [{upstream: fake, model: fake-model}]
`);
  const page = await openPage(gw.base);
  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByLabel('Model').fill('smart');
  await page.getByLabel('Prompt').fill('Say hello');
  await page.getByRole('button', { name: 'Send' }).click();
  const answer = page.locator('.playground .message .markdown');
  await answer.locator('strong', { hasText: 'the playground' }).waitFor(WAIT);
  const stats = page.getByRole('definition');
  await page.locator('[data-stat=total]', { hasText: / ms$/ }).waitFor(WAIT);
  assert.equal(await page.locator('[data-stat=upstream]').innerText(), 'fake');
  assert.match(await page.locator('[data-stat=first-token]').innerText(), /^\d[\d,]* ms$/);
  assert.match(await page.locator('[data-stat=tokens]').innerText(), /^(\d+ in, \d+ out|not reported by the upstream)$/);
  assert.ok(await stats.count() >= 4);
  await screenshot(page, 'playground');
  // An upstream that fails: its error, shown (the model itself, not the route, which would
  // try again).
  await page.getByLabel('Model').fill('fake-model');
  await page.getByLabel('Prompt').fill('Again');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.playground [role=alert]', { hasText: /503|overloaded/ }).waitFor(WAIT);
  assert.deepEqual(page.problems, []);
});

test('reject with feedback: the model is told, and the file is untouched', async () => {
  const { gw, workspace } = await setup('console-reject', [
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'teh!' }),
    'Understood, left it alone.',
  ]);
  const page = await openPage(gw.base);
  await newChat(page, { title: 'Rejecting' });
  await send(page, 'Change README.md');
  await page.locator('section.approval').waitFor(WAIT);
  // The keyboard: r opens the feedback box.
  await page.locator('section.approval').focus();
  await page.keyboard.press('r');
  const feedback = page.getByLabel('Tell the agent why (optional)');
  await feedback.waitFor(WAIT);
  await feedback.fill('Keep the original wording');
  await page.getByRole('button', { name: 'Reject', exact: true }).click();
  await page.getByText('Understood, left it alone.').first().waitFor(WAIT);
  assert.equal(readFileSync(join(workspace, 'README.md'), 'utf8'), 'hello teh world\n');
  await page.getByRole('button', { name: /Show steps/ }).click();
  const step = page.locator('.past-run .call').first();
  await step.locator('summary').click();
  const text = await step.innerText();
  assert.match(text, /rejected/);
  // What the model read: the denial with the human's words.
  assert.match(text, /denied[\s\S]*Keep the original wording/);
  assert.deepEqual(page.problems, []);
});

test('a workflow runs from the form generated from its schema', async () => {
  const workflows = join(dir, 'console-workflows');
  mkdirSync(workflows, { recursive: true });
  writeFileSync(join(workflows, 'show_file.yaml'), `id: show_file
name: Show a file
description: Reads a file.
category: Reading
parameters:
  type: object
  properties:
    path:
      type: string
      minLength: 1
      description: The file to read
    end_line:
      type: integer
      minimum: 1
      default: 5
      description: The last line to show
    style:
      type: string
      enum: [plain, fancy]
      default: plain
  required: [path]
steps:
  - id: read
    tool: read_file
    parameters:
      path: "{{params.path}}"
      end_line: "{{params.end_line}}"
`);
  const { gw } = await setup('console-workflow', [], `  workflows_dir: ${workflows}\n`);
  const page = await openPage(gw.base);
  await newChat(page, { title: 'Workflows' });
  await page.getByRole('tab', { name: 'Workflows' }).click();
  await page.getByRole('heading', { name: 'Reading' }).waitFor(WAIT);
  await page.getByRole('button', { name: 'Show a file' }).click();
  // Defaults filled in, enums as a select, descriptions attached, required marked.
  assert.equal(await page.getByLabel('end_line').inputValue(), '5');
  assert.equal(await page.getByLabel('style').evaluate((e) => e.tagName), 'SELECT');
  assert.equal(await page.getByLabel('path').getAttribute('required'), '');
  assert.equal(await page.getByLabel('path').evaluate((e) => document.getElementById(e.getAttribute('aria-describedby')).textContent), 'The file to read');
  await page.getByLabel('path').fill('README.md');
  await page.getByRole('button', { name: 'Run Show a file' }).click();
  // The run shows in the conversation with its steps, also once it has ended.
  const entry = page.locator('.message', { hasText: 'hello teh world' });
  await entry.waitFor(WAIT);
  await entry.getByRole('button', { name: /Show steps \(1 tool call, completed\)/ }).click();
  await entry.locator('.timeline .workflow-step', { hasText: 'read' }).waitFor(WAIT);
  await entry.locator('.timeline .call', { hasText: 'read_file' }).waitFor(WAIT);
  assert.deepEqual(page.problems, []);
});

test('a cut event stream resumes with Last-Event-ID: no gap, no duplicate step', async () => {
  const { gw } = await setup('console-resume', [
    call('read_file', { path: 'README.md' }),
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'the' }),
    call('read_file', { path: 'README.md' }),
    call('list_files', { path: '.' }),
    'All done after the cut.',
  ]);
  const proxy = await startProxy(new URL(gw.base).port);
  const page = await openPage(proxy.base);
  await newChat(page);
  await send(page, 'Fix it');
  await page.locator('section.approval').waitFor(WAIT);
  const runId = await page.locator('.live-run').getAttribute('data-run-id');
  const callId = await page.locator('section.approval').getAttribute('data-call-id');

  // The network drops; meanwhile the run goes on (approved from elsewhere) and ends.
  proxy.cut();
  await page.getByRole('status').filter({ hasText: 'reconnecting' }).waitFor(WAIT);
  const decided = await api(gw.base, 'POST', `/context/runs/${runId}/approvals/${callId}`, { decision: 'approve' });
  assert.equal(decided.status, 200);
  const all = await runEvents(gw.base, runId);
  assert.equal(all.at(-1).type, 'run.completed');
  proxy.restore();

  // The console catches up: the steps it missed, each once, in order.
  await page.getByText('All done after the cut.').first().waitFor(WAIT);
  const expected = all.filter((e) => e.type === 'tool.call').map((e) => e.call_id);
  await page.getByRole('button', { name: /Show steps/ }).click();
  await page.locator('.past-run .call').nth(expected.length - 1).waitFor(WAIT);
  const shown = await page.locator('.past-run .call').evaluateAll((els) => els.map((e) => e.dataset.callId));
  assert.deepEqual(shown, expected);
  assert.deepEqual(page.problems, []);
});

test('the live view after a cut: every event applied once', async () => {
  const { gw } = await setup('console-live-resume', [
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'the' }),
    call('read_file', { path: 'README.md' }),
    call('replace_in_file', { path: 'README.md', find: 'world', replace: 'there' }),
    'Two edits.',
  ]);
  const proxy = await startProxy(new URL(gw.base).port);
  const page = await openPage(proxy.base);
  await newChat(page);
  await send(page, 'Edit twice');
  await page.locator('section.approval').waitFor(WAIT);
  const runId = await page.locator('.live-run').getAttribute('data-run-id');
  const first = await page.locator('section.approval').getAttribute('data-call-id');
  proxy.cut();
  await page.getByRole('status').filter({ hasText: 'reconnecting' }).waitFor(WAIT);
  await api(gw.base, 'POST', `/context/runs/${runId}/approvals/${first}`, { decision: 'approve' });
  // The run is at the second approval now; the console has not seen any of it.
  const seen = await runEvents(gw.base, runId, { stop: (e) => e.type === 'approval.required' && e.call_id !== first });
  proxy.restore();
  const second = seen.at(-1).call_id;
  await page.locator(`section.approval[data-call-id="${second}"]`).waitFor(WAIT);
  assert.equal(Number(await page.locator('.live-run').getAttribute('data-last-event')), seen.at(-1).id);
  const shown = await page.locator('.live-run .call').evaluateAll((els) => els.map((e) => e.dataset.callId));
  assert.deepEqual(shown, seen.filter((e) => e.type === 'tool.call').map((e) => e.call_id));
  assert.deepEqual(page.problems, []);
});

test('two tabs on one approval: the second sees the first one\'s decision, not an error', async () => {
  const { gw, workspace } = await setup('console-two-tabs', [
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'the' }),
    'Done in one tab.',
  ]);
  const a = await openPage(gw.base);
  await newChat(a, { title: 'Two tabs' });
  await send(a, 'Fix it');
  await a.locator('section.approval').waitFor(WAIT);

  // Tab B comes through a proxy, so its stream can be cut before A decides: B still shows the
  // approval when its human clicks.
  const proxy = await startProxy(new URL(gw.base).port);
  const b = await openPage(proxy.base);
  await b.getByRole('link', { name: /Two tabs/ }).click();
  await b.locator('section.approval').waitFor(WAIT);
  await b.route('**/events', (route) => route.abort());
  proxy.cut();
  proxy.restore();

  await a.getByRole('button', { name: /^Approve a$/ }).click();
  await a.getByText('Done in one tab.').first().waitFor(WAIT);
  assert.equal(readFileSync(join(workspace, 'README.md'), 'utf8'), 'hello the world\n');

  await b.getByRole('button', { name: /^Approve a$/ }).click();
  await b.getByText(/Already decided elsewhere/).waitFor(WAIT);
  // Once its stream is back, B shows the run as it ended.
  await b.unroute('**/events');
  await b.getByText('Done in one tab.').first().waitFor(WAIT);
  assert.deepEqual([...a.problems, ...b.problems], []);
});

test('review: hunks picked by checkbox are accepted, the rest rejected', async () => {
  const numbered = Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join('');
  const { gw, workspace } = await setup('console-review', [
    call('replace_in_file', { path: 'list.txt', find: 'line 2\n', replace: 'line two\n' }),
    call('replace_in_file', { path: 'list.txt', find: 'line 19\n', replace: 'line nineteen\n' }),
    'Two suggestions await your review.',
  ]);
  writeFileSync(join(workspace, 'list.txt'), numbered);
  const page = await openPage(gw.base);
  await newChat(page, { title: 'Review', edits: 'review' });
  // The conversation says the chat is in review mode, and how much waits there.
  await page.locator('.chat-head .review-mode').waitFor(WAIT);
  await send(page, 'Spell out two numbers');
  await page.getByText('Two suggestions await your review.').first().waitFor(WAIT);
  assert.equal(readFileSync(join(workspace, 'list.txt'), 'utf8'), numbered);
  await page.getByRole('button', { name: '2 suggestions to review' }).waitFor(WAIT);
  assert.equal(await page.getByRole('tab', { name: 'Review' }).innerText(), 'Review2');

  await page.getByRole('button', { name: '2 suggestions to review' }).click();
  assert.equal(await page.getByRole('tab', { name: 'Review' }).getAttribute('aria-selected'), 'true');
  const session = page.locator('article.session');
  await session.locator('.hunk').nth(1).waitFor(WAIT);
  assert.equal(await session.locator('.hunk').count(), 2);
  assert.match(await session.locator('h3').innerText(), /list\.txt/);
  await screenshot(page, 'review');
  assert.deepEqual(await diffLayoutProblems(session), []);
  // Only the first hunk.
  await session.locator('.hunk').nth(1).getByRole('checkbox').uncheck();
  await page.getByRole('button', { name: 'Accept selected (1)' }).click();
  await page.locator('article.session .hunk').filter({ hasText: 'nineteen' }).waitFor(WAIT);
  await page.waitForFunction(() => document.querySelectorAll('article.session .hunk').length === 1);
  assert.equal(readFileSync(join(workspace, 'list.txt'), 'utf8'), numbered.replace('line 2\n', 'line two\n'));
  await page.getByRole('button', { name: '1 suggestion to review' }).waitFor(WAIT);
  // The rest is rejected: nothing more is written.
  await page.getByRole('button', { name: 'Reject' }).click();
  await page.getByText('Nothing awaits review.').waitFor(WAIT);
  await page.getByRole('button', { name: /suggestions? to review/ }).waitFor({ ...WAIT, state: 'detached' });
  await page.getByText(/Resolved \(1\)/).waitFor(WAIT);
  assert.equal(readFileSync(join(workspace, 'list.txt'), 'utf8'), numbered.replace('line 2\n', 'line two\n'));
  assert.deepEqual(page.problems, []);
});

test('the document: written in the console, the agent\'s approved edit appears live', async () => {
  const { gw } = await setup('console-document', [
    call('edit_document', { find: 'teh', replace: 'the' }),
    'Fixed the document.',
  ]);
  const page = await openPage(gw.base);
  await newChat(page, { title: 'Document' });
  await page.getByRole('tab', { name: 'Document' }).click();
  await page.getByText('This chat has no document yet.').waitFor(WAIT);
  await page.getByLabel('Name').fill('draft.md');
  await page.getByLabel(/^Text/).fill('A draft with teh typo.');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('version 1').waitFor(WAIT);

  await page.getByRole('tab', { name: 'Conversation' }).click();
  await send(page, 'Fix the document');
  await page.locator('section.approval').waitFor(WAIT);
  await page.getByRole('button', { name: /^Approve a$/ }).click();
  await page.getByText('Fixed the document.').first().waitFor(WAIT);
  await page.getByRole('tab', { name: 'Document' }).click();
  await page.waitForFunction(() => document.getElementById('doc-text').value === 'A draft with the typo.');
  await page.getByText('version 2').waitFor(WAIT);
  assert.deepEqual(page.problems, []);
});

test('approve for this run by keyboard, cancel a run, delete a chat', async () => {
  const { gw, workspace } = await setup('console-scope', [
    call('replace_in_file', { path: 'README.md', find: 'teh', replace: 'the' }),
    call('replace_in_file', { path: 'README.md', find: 'world', replace: 'there' }),
    'Both edits made.',
    call('replace_in_file', { path: 'README.md', find: 'hello', replace: 'bye' }),
  ]);
  const page = await openPage(gw.base);
  await newChat(page, { title: 'Scoped' });
  await send(page, 'Two edits');
  await page.locator('section.approval').waitFor(WAIT);
  const runId = await page.locator('.live-run').getAttribute('data-run-id');
  // Shift+A: this tool is approved for the rest of the run, so the second edit is not asked.
  await page.locator('section.approval').focus();
  await page.keyboard.press('Shift+A');
  await page.getByText('Both edits made.').first().waitFor(WAIT);
  assert.equal(readFileSync(join(workspace, 'README.md'), 'utf8'), 'hello the there\n');
  const events = await runEvents(gw.base, runId);
  assert.equal(events.filter((e) => e.type === 'approval.required').length, 1);
  assert.equal(events.find((e) => e.type === 'approval.resolved').scope, 'run');

  // Cancel while the next run awaits approval: nothing written, the run cancelled.
  await send(page, 'One more');
  await page.locator('section.approval').waitFor(WAIT);
  const second = await page.locator('.live-run').getAttribute('data-run-id');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: /Show steps \(1 tool call, cancelled\)/ }).waitFor(WAIT);
  assert.equal((await api(gw.base, 'GET', `/context/runs/${second}`)).json.status, 'cancelled');
  assert.equal(readFileSync(join(workspace, 'README.md'), 'utf8'), 'hello the there\n');

  // Delete asks once more, then the chat is gone.
  await page.getByRole('button', { name: 'Delete Scoped' }).click();
  await page.getByRole('button', { name: 'Confirm deleting Scoped' }).click();
  await page.getByText('No chats yet.').waitFor(WAIT);
  assert.equal((await api(gw.base, 'GET', '/context/chats')).json.data.length, 0);
  assert.deepEqual(page.problems, []);
});

test('sign-in with a Context API key when keys are configured', async () => {
  const { gw } = await setup('console-keys', [], `  api_keys: ["console-test-key-0123456789"]\n`);
  const page = await openPage(gw.base);
  await page.getByLabel('API key').fill('wrong-key-0123456789');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'refused' }).waitFor(WAIT);
  await page.getByLabel('API key').fill('console-test-key-0123456789');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'New chat' }).waitFor(WAIT);
  // Kept for the tab: a reload stays signed in; a new tab asks again.
  await page.reload();
  await page.getByRole('link', { name: 'New chat' }).waitFor(WAIT);
  const other = await openPage(gw.base);
  await other.getByLabel('API key').waitFor(WAIT);
  assert.deepEqual(page.problems, []);
});
