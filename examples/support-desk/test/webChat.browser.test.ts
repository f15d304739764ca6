import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebDesk, type WebDesk } from '../src/chat/webDesk.js';
import { DEMO_DATA_FILE } from '../src/data/dataSource.js';
import { ensureChromium } from '../../../test/support/chromium.js';

/** Where the test saves its screenshot (gitignored). */
const OUTPUT_DIR = fileURLToPath(new URL('../.data/test-output', import.meta.url));
const chromiumBinary = ensureChromium();
if (chromiumBinary.reason !== undefined) console.log(`[webChat.browser] skipped: ${chromiumBinary.reason}`);

describe.skipIf(chromiumBinary.path === undefined)('the desk as a web chat, driven in headless Chromium', () => {
  let dir: string;
  let desk: WebDesk;
  let browser: Browser;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baton-web-chat-'));
    desk = await startWebDesk({
      storeDir: join(dir, 'store'),
      distDir: join(dir, 'dist'),
      data: DEMO_DATA_FILE,
      paceMs: 10,
    });
    browser = await chromium.launch({ executablePath: chromiumBinary.path!, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await desk?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a customer chats (streamed reply, handoff, a question), a supervisor approves the refund, and a reload shows the same conversation', async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 1100 } });
    page.setDefaultTimeout(15_000);
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(desk.url);
    await page.locator('#session-id', { hasText: /^[0-9a-f-]{36}$/ }).waitFor();
    // The customers on file are listed on the page, whom the person at the keyboard plays.
    await page.locator('#customer-list li', { hasText: 'Crystal Minh: account' }).waitFor({ state: 'attached' });
    expect(await page.locator('#customer-list li').count()).toBe(10);
    expect(await page.locator('#customer-list').textContent()).toMatch(/username \w+, email \w+@email\.com/);
    await say(
      page,
      'This is Crystal Minh. A premium service was added to my account without asking me, and now I am being charged for the service.',
    );
    await page.locator('li.handoff', { hasText: 'triage handed you over to account' }).waitFor();
    await page.locator('li.question', { hasText: 'How much were you charged' }).waitFor();
    expect(await page.locator('li.action').allInnerTexts()).toContain('✓ Account has been pulled up for Crystal Minh.');

    await say(page, 'I never signed up for it and I was charged $40.');
    await page.locator('#status', { hasText: 'A supervisor is reviewing offer-refund' }).waitFor();
    expect(await page.locator('#message').isDisabled()).toBe(true);
    expect(await page.locator('li.action.awaiting').innerText()).toContain('account runs offer-refund');

    await page.getByRole('button', { name: /Supervisor/ }).click();
    const card = page.locator('.card', { hasText: 'account wants to run offer-refund' });
    expect(await card.locator('pre').innerText()).toContain('"amount": "40"');
    // The supervisor view tells the session as `baton inspect` does: the refund waits on the approval…
    const timeline = page.getByLabel('Timeline');
    await page.locator('#timeline', { hasText: 'approve offer-refund' }).waitFor();
    expect(await timeline.innerText()).toMatch(/request tool_approval from account: approve offer-refund .*→ pending/);
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.locator('#no-approvals').waitFor({ state: 'visible' });
    // …and after the approval (fetched again after the decision), the handoff, the refund run and the answer.
    await page.locator('#timeline', { hasText: 'offer-refund' }).filter({ hasText: '→ "approved"' }).waitFor();
    const told = await timeline.innerText();
    expect(told).toMatch(/^\S+\s+handoff triage → account: "flow manage_account/m);
    expect(told).toMatch(
      /^\S+\s+tool offer-refund .*"40.* \(\d+ ms\) → .*A refund has been made for the amount of \$40/m,
    );
    expect(told).toMatch(/request tool_approval from account: approve offer-refund .*→ "approved"/);
    expect(await timeline.isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Customer' }).click();
    const reply = page.locator('li.assistant', { hasText: 'refunded $40' });
    await reply.waitFor();
    expect(await reply.innerText()).toContain('account');
    expect(await page.locator('li.action').allInnerTexts()).toContain(
      '✓ A refund has been made for the amount of $40.',
    );
    // The replies arrived as streamed pieces (message.delta events), not only as whole messages.
    expect(Number(await page.locator('#transcript').getAttribute('data-deltas'))).toBeGreaterThan(20);
    expect(await page.locator('li.streaming').count()).toBe(0);

    const before = await transcriptOf(page);
    await mkdir(OUTPUT_DIR, { recursive: true });
    await page.screenshot({ path: join(OUTPUT_DIR, 'web-chat.png'), fullPage: true });

    await page.reload();
    await page.locator('li.assistant', { hasText: 'refunded $40' }).waitFor();
    expect(await transcriptOf(page)).toEqual(before);
    expect(await page.locator('#session-id').innerText()).toBe(before.session);
    await say(page, 'No, that is everything. Thank you!');
    await page.locator('li.user', { hasText: 'No, that is everything' }).waitFor();
    // The customer's goodbye: the specialist on the case closes the conversation.
    await page.locator('li.action', { hasText: 'account runs end_conversation' }).waitFor();
    await page.locator('li.action', { hasText: '✓ The conversation is closed.' }).waitFor();
    // The specialist closes the case with end_conversation; the page says so, and the next message starts a new conversation.
    await page.locator('#status', { hasText: 'This conversation has ended' }).waitFor();
    await say(page, 'Hello again, one more question.');
    await page.locator('li.user', { hasText: 'Hello again' }).waitFor();
    expect(await page.locator('#session-id').innerText()).not.toBe(before.session);
    expect(await page.locator('li.user').count()).toBe(1);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 120_000);
});

async function say(page: Page, text: string): Promise<void> {
  const input = page.getByLabel('Message');
  await input.waitFor();
  await page.locator('#message:enabled').waitFor();
  await input.fill(text);
  await input.press('Enter');
}

/** The transcript as the customer sees it (one string per line item) and the session id. */
async function transcriptOf(page: Page): Promise<{ session: string; items: string[] }> {
  return {
    session: await page.locator('#session-id').innerText(),
    items: await page.locator('#transcript > li').allInnerTexts(),
  };
}
