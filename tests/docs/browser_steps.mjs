// Steps the docs describe in words, taken in the console in Debian's Chromium (playwright-core
// from tests/e2e), at the point of a walkthrough where a `browser=NAME` marker stands: its
// gateway, its workspace and its fake model, as the blocks before left them. Each step does what
// the text around its marker tells the reader to do, and checks what the text says happens.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const { chromium } = createRequire(fileURLToPath(new URL('../e2e/package.json', import.meta.url)))('playwright-core');
const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const WAIT = { timeout: 20_000 };

async function inChromium(url, steps) {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Root in CI: no sandbox. The rest keeps Chromium off the (closed) network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(url);
    await steps(page);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
}

export const browserSteps = {
  // README, "The console": New chat (workspace and model as the form offers them), ask it to fix
  // the typo, watch the steps arrive, approve the write from its card with the diff; the file is
  // fixed and the answer arrives.
  'console-fix-typo': ({ url, path }) => inChromium(url, async (page) => {
    await page.getByRole('link', { name: 'New chat' }).click();
    // The form offers a workspace and a model once the gateway has listed them, as the reader
    // sees before creating the chat; a click before that makes a chat without a workspace, or
    // none (the model is required).
    await page.waitForFunction(() => document.querySelector('#new-workspace')?.value &&
      document.querySelector('#new-model')?.value, null, WAIT);
    await page.getByRole('button', { name: 'Create chat' }).click();
    await page.getByRole('tab', { name: 'Conversation' }).waitFor(WAIT);
    await page.getByRole('textbox', { name: 'Message' }).fill('fix the typo teh in README.md');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.timeline .call', { hasText: 'Reading README.md' }).waitFor(WAIT);
    await page.locator('section.approval .d2h-file-wrapper').waitFor(WAIT);
    assert.match(await page.locator('section.approval .diff').innerText(), /teh/);
    await page.getByRole('button', { name: /^Approve\b/ }).first().click();
    await page.getByText('README.md line 3 now reads').first().waitFor(WAIT);
    assert.equal(readFileSync(path('/tmp/contextgate-demo/README.md'), 'utf8'), '# Demo\n\nThis is the readme.\n');
  }),
};
