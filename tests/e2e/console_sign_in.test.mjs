// The console's sign-in in Debian's Chromium: with auth.oidc set, the console offers "Sign in"
// instead of its key prompt, the browser goes through oidc-provider's login page and comes back
// signed in, the console shows who, and signs out.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { startScriptedFake } from './support.mjs';
import { freePort, gatewayFor, startProvider } from './oidc_provider.mjs';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const WAIT = { timeout: 15_000 };

let browser;
let provider;
let base;
before(async () => {
  const upstream = await startScriptedFake([]);
  const port = await freePort();
  provider = await startProvider(`http://127.0.0.1:${port}/auth/callback`);
  base = (await gatewayFor('console-sign-in.yaml', provider.issuer, port, upstream)).base;
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

test('the console signs in through the provider\'s login page and out again', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(base + '/console/');
  await page.getByRole('button', { name: 'Sign in' }).click(WAIT);
  // oidc-provider's development login page (any password), then its consent page.
  await page.waitForURL((url) => url.href.startsWith(provider.issuer + '/interaction/'), WAIT);
  await page.fill('input[name=login]', 'lee');
  await page.fill('input[name=password]', 'any');
  await page.click('button[type=submit]');
  await page.getByRole('button', { name: 'Continue' }).click(WAIT);
  await page.waitForURL((url) => url.href.startsWith(base + '/console/'), WAIT);
  const who = page.locator('.topbar .who');
  await who.waitFor(WAIT);
  assert.equal(await who.textContent(), 'Lee Lead · team_admin');
  assert.equal(await who.getAttribute('title'), 'lee@example.com');
  await page.getByRole('button', { name: 'Sign out' }).click(WAIT);
  await page.getByRole('button', { name: 'Sign in' }).waitFor(WAIT);
  const me = await page.evaluate(() => fetch('/auth/me').then((r) => r.status));
  assert.equal(me, 401);
  assert.deepEqual(problems, []);
});
