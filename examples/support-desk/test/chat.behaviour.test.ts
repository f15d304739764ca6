/**
 * The chat behaviours issue 14 asks for, through the real `chat` command (piped input, offline
 * models learned from the demo conversations, a FileStore in a temp dir): a duplicate charge on an
 * order reaches billing as a purchase dispute, and a bare greeting gets a question back instead of
 * a handoff. Leaving the chat (end of input, as Ctrl-D or Ctrl-C) leaves the session open, an
 * approval prompt unanswered included; `--session ID` resumes it, printing the conversation so far,
 * and `/close` closes it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '@baton/core';
import { IDENTITY_QUESTION } from '@baton/support-desk-models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DATA_FILE } from '../src/data/dataSource.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'support-desk-chat-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `chat` with these lines on its standard input; resolves with its output lines and exit code. */
function chat(session: string, input: readonly string[]): Promise<{ lines: string[]; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      tsx,
      ['--conditions=source', 'src/cli.ts', 'chat', '--store-dir', join(dir, 'store'), '--session', session],
      {
        cwd: root,
        env: { ...process.env, OPENAI_API_KEY: '', MONGODB_URL: '', BATON_ABCD: DEMO_DATA_FILE },
      },
    );
    let out = '';
    child.stdout.on('data', (data: Buffer) => {
      out += data.toString();
    });
    child.stderr.on('data', (data: Buffer) => {
      out += data.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ lines: out.split('\n').filter((line) => line.trim() !== ''), code }));
    child.stdin.end(`${input.join('\n')}\n`);
  });
}

describe('chat: triage waits for the intent', () => {
  it('"I was charged twice for my order" reaches billing as a purchase dispute (at once, or after the name and which topic when triage is not sure enough)', async () => {
    const { lines, code } = await chat('chat-charged-twice', [
      'I was charged twice for my order',
      'Crystal Minh',
      'a charge I dispute',
      '/quit',
    ]);
    expect(code).toBe(0);
    const handoffs = lines.filter((line) => line.includes('↪ handoff: triage →'));
    expect(handoffs).toHaveLength(1);
    expect(handoffs[0]).toMatch(/↪ handoff: triage → billing \(flow purchase_dispute, confidence (0|1)\.\d\d\)/);
    // Whatever triage said before it handed off was its question for the name, or which topic, naming the two it was torn between.
    const asked = lines.slice(0, lines.indexOf(handoffs[0]!)).filter((line) => line.startsWith('[triage]'));
    expect(
      asked.every(
        (line) =>
          line === `[triage] ${IDENTITY_QUESTION}` ||
          /^\[triage\] Could you tell me a little more\? Is it about .+, or about .+\?$/.test(line),
      ),
    ).toBe(true);
  }, 60_000);

  it('lists every customer on file at start, with what the agents ask for: name, account id, username, email', async () => {
    const { lines, code } = await chat('chat-customers', ['/quit']);
    expect(code).toBe(0);
    const start = lines.indexOf('Customers on file (play any of them; give what the agent asks for):');
    expect(start).toBeGreaterThan(-1);
    const listed = lines.slice(start + 1, start + 11);
    expect(listed).toHaveLength(10);
    for (const line of listed)
      expect(line).toMatch(
        /^ {2}[A-Z][a-z]+ [A-Z][a-z]+: account [A-Z0-9]{10}, username \w+, email \w+@email\.com, zip \d{5}, phone .+, order \d{10} \(\$\d+\)$/,
      );
    expect(listed[0]).toContain('Alessandro Phoenix: account');
  }, 60_000);

  it('"hi" gets a question back instead of a handoff; the answer is routed', async () => {
    const { lines, code } = await chat('chat-hi', ['hi', 'I forgot my password and cannot log in', '/quit']);
    expect(code).toBe(0);
    const typedHi = lines.findIndex((line) => line.endsWith('you> hi'));
    const typedAnswer = lines.findIndex((line) => line.includes('you> I forgot my password'));
    expect(typedHi).toBeGreaterThanOrEqual(0);
    expect(typedAnswer).toBeGreaterThan(typedHi);
    const afterHi = lines.slice(typedHi + 1, typedAnswer);
    expect(afterHi).toContain('[triage] Hello, thank you for contacting AcmeCorp! How can I help you today?');
    expect(afterHi.some((line) => line.includes('handoff'))).toBe(false);
    expect(
      lines.slice(typedAnswer).some((line) => /↪ handoff: triage → account \(flow account_access/.test(line)),
    ).toBe(true);
  }, 60_000);
});

describe('chat: leaving, resuming and closing', () => {
  it('end of input at an approval prompt leaves the session open; --session shows the conversation so far and asks again; /close closes it', async () => {
    const said = ['I want a refund, the item I got was broken', 'Joyce Wu', 'a refund'];
    const details = 'my order 0081422000 account W44YK1AOXY, email joycewu@email.com, username jwu';
    const first = await chat('chat-resume', [...said, details, 'yes', '40']);
    expect(first.code).toBe(0);
    expect(first.lines.some((line) => /^Approve offer-refund .*\? \[y\/n\]/.test(line))).toBe(true);
    expect(first.lines.at(-1)).toBe('Session chat-resume left open; continue it with --session chat-resume.');
    const store = new FileStore({ directory: join(dir, 'store') });
    expect(await store.getSession('chat-resume')).toMatchObject({ status: 'active' });
    // No answer was recorded for the approval: no offer-refund result.
    expect(
      (await store.readMessages('chat-resume', 'main')).filter(
        (m) => m.role === 'tool' && m.toolName === 'offer-refund',
      ),
    ).toEqual([]);

    const second = await chat('chat-resume', ['y', '/close']);
    expect(second.code).toBe(0);
    const resuming = second.lines.indexOf('Resuming: the conversation so far');
    expect(resuming).toBeGreaterThan(0);
    const earlier = second.lines.slice(
      resuming + 1,
      second.lines.findIndex((line) => line.startsWith('Approve offer-refund')),
    );
    expect(earlier[0]).toBe(`you> ${said[0]}`);
    expect(earlier).toContainEqual(expect.stringMatching(/^ {2}↪ handoff: triage → returns \(flow /));
    expect(earlier).toContain(`you> ${details}`);
    expect(earlier.at(-1)).toMatch(/^ {2}\? returns wants to run offer-refund .*: approval needed$/);
    expect(second.lines).toContainEqual(expect.stringMatching(/^Approve offer-refund .*\? \[y\/n\] y$/));
    expect(second.lines.at(-1)).toBe('Session chat-resume closed; its episode is saved in the store.');
    expect(await store.getSession('chat-resume')).toMatchObject({
      status: 'closed',
      closedReason: 'the customer closed the chat',
    });
    const refund = (await store.readMessages('chat-resume', 'main')).filter(
      (m) => m.role === 'tool' && m.toolName === 'offer-refund',
    );
    expect(refund).toMatchObject([{ isError: false }]);
    await store.close();
  }, 120_000);
});
