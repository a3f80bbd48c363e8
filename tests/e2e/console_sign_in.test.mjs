// The console's sign-in in Debian's Chromium: with auth.oidc set, the console offers "Sign in"
// instead of its key prompt, the browser goes through oidc-provider's login page and comes back
// signed in, the console shows who, and signs out. Then each role, signed in the same way in a
// browser context of its own: the operator pages it sees, one thing it may do done through the
// page, and one thing it may not do absent from the page and refused by the gateway when forced
// with the session's CSRF token.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { startScriptedFake } from './support.mjs';
import { browse, freePort, gatewayFor, startProvider } from './oidc_provider.mjs';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const WAIT = { timeout: 15_000 };

let browser;
let provider;
let base;
before(async () => {
  const upstream = await startScriptedFake([]);
  const port = await freePort();
  provider = await startProvider(`http://127.0.0.1:${port}/auth/callback`);
  base = (await gatewayFor('console-sign-in.yaml', provider.issuer, port, upstream, `teams:
  - {name: platform}
  - {name: ml, budget: {usd: 100, period: month}}
`)).base;
  // Mo (ml's member) and Nia (a member of no team) have signed in before: users the team
  // admin's Members page lists.
  for (const login of ['mo', 'nia']) {
    const done = await browse(`${base}/auth/login?return=%2Fconsole%2F`, { login, stopAt: (url) => url.startsWith(base + '/console') });
    assert.equal(done.url, base + '/console/', done.visited.join(' -> '));
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});
after(async () => {
  await browser?.close();
  await provider?.close();
});

// Signs in as `login` on the provider's login page (any password) and its consent page, in a
// browser context of its own; resolves on the console's chat page, signed in.
async function signIn(login) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(e.message));
  await page.goto(base + '/console/');
  await page.getByRole('button', { name: 'Sign in' }).click(WAIT);
  await page.waitForURL((url) => url.href.startsWith(provider.issuer + '/interaction/'), WAIT);
  await page.fill('input[name=login]', login);
  await page.fill('input[name=password]', 'any');
  await page.click('button[type=submit]');
  await page.getByRole('button', { name: 'Continue' }).click(WAIT);
  await page.waitForURL((url) => url.href.startsWith(base + '/console/'), WAIT);
  await page.locator('.topbar .who').waitFor(WAIT);
  return page;
}

// The operator pages as `page`'s role sees them: opened from the console's Operator link; the
// names in their navigation once it shows who is signed in.
async function operatorPages(page) {
  await page.getByRole('link', { name: 'Operator' }).click(WAIT);
  await page.locator('.operator .who').waitFor(WAIT);
  return page.getByRole('navigation', { name: 'Operator pages' }).getByRole('link').allTextContents();
}

const openPage = async (page, name) => {
  await page.getByRole('navigation', { name: 'Operator pages' }).getByRole('link', { name }).click(WAIT);
};

// What the gateway answers `page`'s session to a request the page does not offer, sent with
// its CSRF token as the console would: the status.
const forced = (page, method, path, body) => page.evaluate(async ([method, path, body]) => {
  const { csrf } = await fetch('/auth/me').then((r) => r.json());
  const headers = { 'content-type': 'application/json', 'x-csrf-token': csrf };
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return res.status;
}, [method, path, body]);

const userId = async (page, email) => page.evaluate(async (email) => {
  const users = await fetch('/admin/users').then((r) => r.json());
  return users.data.find((u) => u.email === email)?.id;
}, email);

test('the console signs in through the provider\'s login page and out again', async () => {
  const page = await signIn('lee');
  const who = page.locator('.topbar .who');
  assert.equal(await who.textContent(), 'Lee Lead · team_admin');
  assert.equal(await who.getAttribute('title'), 'lee@example.com');
  await page.getByRole('button', { name: 'Sign out' }).click(WAIT);
  await page.getByRole('button', { name: 'Sign in' }).waitFor(WAIT);
  const me = await page.evaluate(() => fetch('/auth/me').then((r) => r.status));
  assert.equal(me, 401);
  // The operator pages, signed out, offer the provider first (the admin key stays for automation).
  await page.evaluate(() => { location.hash = '#/admin/keys'; });
  await page.getByRole('button', { name: 'Sign in with your company account' }).waitFor(WAIT);
  assert.ok(await page.locator('#admin-key').isVisible());
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('an admin sees every page and makes a team; a declared team cannot be deleted', async () => {
  const page = await signIn('ada');
  assert.deepEqual(await operatorPages(page), ['Keys', 'Usage', 'Teams', 'Members', 'Health', 'Request log', 'Audit']);
  await openPage(page, 'Teams');
  await page.fill('#team-name', 'research');
  await page.fill('#team-usd', '50');
  await page.getByRole('button', { name: 'Create team' }).click(WAIT);
  const made = page.locator('tr[data-team=research]');
  await made.waitFor(WAIT);
  assert.match(await made.textContent(), /\$50\.00 a month/);
  await page.getByRole('button', { name: 'Change the budget of research' }).click(WAIT);
  const budget = page.getByRole('form', { name: 'Budget of research' });
  await budget.getByRole('spinbutton', { name: 'USD' }).fill('75');
  await budget.getByRole('combobox', { name: 'Period' }).selectOption('week');
  await budget.getByRole('button', { name: 'Save' }).click(WAIT);
  await made.filter({ hasText: '$75.00 a week' }).waitFor(WAIT);
  // ml is declared in the configuration: no Delete on its row, and the gateway refuses it.
  await page.locator('tr[data-team=ml]').waitFor(WAIT);
  assert.equal(await page.getByRole('button', { name: 'Delete team ml' }).count(), 0);
  assert.equal(await page.getByRole('button', { name: 'Delete team research' }).count(), 1);
  assert.equal(await forced(page, 'DELETE', '/admin/teams/ml'), 409);
  // Everyone who signed in, in every team.
  await openPage(page, 'Members');
  await page.locator('tr[data-user-id]').first().waitFor(WAIT);
  const people = await page.locator('tr[data-user-id] th .name').allTextContents();
  for (const name of ['Ada Admin', 'Lee Lead', 'Mo Member', 'Nia Newcomer']) assert.ok(people.includes(name), name);
  assert.deepEqual(await page.getByRole('combobox', { name: 'Role of Mo Member' }).locator('option').allTextContents(),
    ['admin', 'team_admin', 'member', 'viewer']);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a team admin sees their team\'s pages, takes a newcomer in, and may not make an admin', async () => {
  const page = await signIn('lee');
  assert.deepEqual(await operatorPages(page), ['Keys', 'Usage', 'Teams', 'Members', 'Audit']);
  // Their team's budget, and no other team's; no team is made here.
  await openPage(page, 'Teams');
  await page.locator('tr[data-team=ml]').waitFor(WAIT);
  assert.deepEqual(await page.locator('tr[data-team]').evaluateAll((rows) => rows.map((r) => r.dataset.team)), ['ml']);
  assert.match(await page.locator('tr[data-team=ml]').textContent(), /\$100\.00 a month/);
  assert.equal(await page.getByRole('button', { name: 'Create team' }).count(), 0);
  // Their team's people and the newcomer; not Ada (of platform).
  await openPage(page, 'Members');
  const nia = page.locator('tr', { hasText: 'Nia Newcomer' });
  await nia.waitFor(WAIT);
  const people = await page.locator('tr[data-user-id] th .name').allTextContents();
  assert.deepEqual(people.sort(), ['Lee Lead', 'Mo Member', 'Nia Newcomer']);
  await page.getByRole('combobox', { name: 'Team of Nia Newcomer' }).selectOption('ml');
  await page.getByRole('button', { name: 'Save Nia Newcomer' }).click(WAIT);
  // The row shows her saved team (Save is off again once nothing differs from the gateway's).
  await page.waitForFunction(() => document.querySelector('button[aria-label="Save Nia Newcomer"]')?.disabled, null, WAIT);
  assert.equal(await page.getByRole('combobox', { name: 'Team of Nia Newcomer' }).inputValue(), 'ml');
  // Member or viewer only: no admin to pick, and the gateway refuses one.
  assert.deepEqual(await page.getByRole('combobox', { name: 'Role of Mo Member' }).locator('option').allTextContents(),
    ['member', 'viewer']);
  const mo = await userId(page, 'mo@example.com');
  assert.equal(await forced(page, 'PATCH', '/admin/users/' + mo, { role: 'admin' }), 403);
  // The change is in ml's audit log, by Lee.
  await openPage(page, 'Audit');
  const record = page.locator('table.audit tbody tr', { hasText: 'user.update' });
  await record.first().waitFor(WAIT);
  assert.match(await record.first().textContent(), /lee@example\.com.*team_admin.*user\.update/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a member sees their own keys and usage, makes a key, and has no Members page', async () => {
  const page = await signIn('mo');
  assert.ok(await page.getByRole('link', { name: 'New chat' }).isVisible());
  assert.deepEqual(await operatorPages(page), ['Keys', 'Usage']);
  await page.fill('#key-name', 'mos-key');
  assert.equal(await page.locator('#key-team').count(), 0);  // their own key, of no team
  await page.getByRole('button', { name: 'Create key' }).click(WAIT);
  await page.getByRole('status').filter({ hasText: 'mos-key' }).waitFor(WAIT);
  assert.match(await page.inputValue('#new-secret'), /\S{20,}/);
  await page.locator('table.keys tr', { hasText: 'mos-key' }).waitFor(WAIT);
  assert.equal(await page.getByRole('link', { name: 'Members' }).count(), 0);
  assert.equal(await forced(page, 'GET', '/admin/users'), 403);
  assert.equal(await forced(page, 'POST', '/admin/teams', { name: 'mine' }), 403);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test('a viewer reads keys, usage and chats, and is offered no change', async () => {
  const page = await signIn('vi');
  // No chat to start, and no composer on the new-chat page.
  assert.equal(await page.getByRole('link', { name: 'New chat' }).count(), 0);
  await page.evaluate(() => { location.hash = '#/new'; });
  await page.getByRole('status').filter({ hasText: 'A viewer reads chats' }).waitFor(WAIT);
  assert.equal(await page.locator('textarea').count(), 0);
  assert.equal(await forced(page, 'POST', '/context/chats', {}), 403);
  await page.evaluate(() => { location.hash = '#/'; });
  assert.deepEqual(await operatorPages(page), ['Keys', 'Usage']);
  await page.getByRole('heading', { name: 'Keys', exact: true }).waitFor(WAIT);
  assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
  assert.equal(await page.getByRole('button', { name: /^Revoke/ }).count(), 0);
  assert.equal(await forced(page, 'POST', '/admin/keys', { name: 'vis-key' }), 403);
  await openPage(page, 'Usage');
  await page.getByRole('heading', { name: 'Usage, the last 30 days' }).waitFor(WAIT);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
