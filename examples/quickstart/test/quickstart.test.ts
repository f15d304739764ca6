/**
 * Runs the quickstart as a user does, `tsx --conditions=source src/quickstart.ts DIR` (the package's
 * `start` script), twice on one temp folder: a real restart between the two processes. Offline: the
 * children get no OPENAI_API_KEY, so the scripted models answer. A last run sets OPENAI_API_KEY and
 * OPENAI_BASE_URL to a Chat Completions server on 127.0.0.1, to check the switch to OpenAI.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FileStore } from '@baton/core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { reply, startOpenAIServer } from '../../../packages/core/test/support/openaiServer.js';

const execFileAsync = promisify(execFile);
const exampleDir = fileURLToPath(new URL('..', import.meta.url));
const tsx = join(exampleDir, 'node_modules', '.bin', 'tsx');

/** One run of the quickstart on `dir`, as a child process; its stdout. Offline unless `openai` is given. */
async function runQuickstart(dir: string, openai: Record<string, string> = {}): Promise<string> {
  const { OPENAI_API_KEY: _key, OPENAI_BASE_URL: _url, OPENAI_MODEL: _model, ...rest } = process.env;
  const env = { ...rest, ...openai };
  const args = ['--conditions=source', 'src/quickstart.ts', dir];
  const { stdout } = await execFileAsync(tsx, args, { cwd: exampleDir, env, timeout: 180_000 });
  return stdout;
}

let dir: string;
let first: string;
let second: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-quickstart-'));
  first = await runQuickstart(dir);
  second = await runQuickstart(dir);
}, 400_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

test('run 1 routes the customer to billing and exits while the refund waits for approval (offline)', () => {
  expect(first).toContain('Models: scripted answers (offline; set OPENAI_API_KEY to run on OpenAI)');
  expect(first).toContain(`Store:  FileStore in ${dir}`);
  expect(first).toContain('== Run 1: u-42 opens chat-1 ==');
  expect(first).toContain('-> triage hands off to billing (double charge)');
  expect(first).toContain('billing calls refund_order({"orderId":"1234"})');
  expect(first).toContain("|| paused: refund_order needs a human's approval");
  expect(first).not.toContain('refund_order returned');
});

test('run 2, a new process on the same folder, finds the paused approval and approves it; the refund runs once', () => {
  expect(second).toContain('== Run 2: a new process, a new FileStore and workflow on the same folder ==');
  expect(second).toContain('chat-1 is paused: billing wants refund_order({"orderId":"1234"}). Approving.');
  expect(second.match(/refund_order returned/g)).toHaveLength(1);
  expect(second).toContain('refund_order returned {"orderId":"1234","refunded":true,"amount":"42.00 EUR"}');
  expect(second).toContain('billing: Done: the duplicate charge of 42.00 EUR on order 1234 is refunded.');
});

test("closing chat-1 writes its episode; the customer's next session recalls it into the model's input", async () => {
  expect(second).toMatch(/Closed chat-1; episode saved, keywords: .*refund/);
  expect(second).toContain('== The same customer comes back: chat-2 ==');
  const recalled = second.slice(second.indexOf("[recalled context, as triage's model receives it]"));
  expect(recalled).toMatch(/^ {4}\| 1\. Conversation chat-1 \([\d-]+, closed: resolved; agents: triage, billing\)$/m);
  expect(recalled).toMatch(/^ {4}\| billing: Done: the duplicate charge of 42\.00 EUR on order 1234 is refunded\.$/m);
  // The shipping script mentions the refund only when the recalled episode is in its input.
  expect(second).toContain(
    'shipping: Your parcel for order 1234 is in transit and arrives Thursday.' +
      ' And yes: last time we refunded the double charge on it.',
  );

  const store = new FileStore({ directory: dir });
  try {
    const episodes = await store.findEpisodes({ userId: 'u-42' });
    expect(episodes.map((e) => e.sessionId).sort()).toEqual(['chat-1', 'chat-2']);
    const chat2 = await store.readMessages('chat-2', 'main');
    expect(chat2.some((m) => m.role === 'context')).toBe(false); // recall reaches the model, not the stored history
  } finally {
    await store.close();
  }
});

test("the README's expected output is what the two runs print (paths and the day aside)", async () => {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const blocks = [...readme.matchAll(/```text\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  expect(blocks).toHaveLength(2);
  // The README writes the folder as '/…/'; the output has the temp folder's path there.
  const lines = (text: string, skip: string) =>
    text
      .replace(/\d{4}-\d\d-\d\d/g, 'DAY')
      .split('\n')
      .filter((line) => !line.includes(skip))
      .join('\n');
  expect(lines(first, dir)).toContain(lines(blocks[0] ?? '', '…').trim());
  expect(lines(second, dir)).toContain(lines(blocks[1] ?? '', '…').trim());
});

test('with OPENAI_API_KEY set it runs on OpenAIChatModel, with OPENAI_BASE_URL and OPENAI_MODEL', async () => {
  await using server = await startOpenAIServer();
  server.enqueue(
    reply.toolCalls([{ name: 'handoff_to_billing', arguments: { reason: 'charged twice' } }]), // triage
    reply.toolCalls([{ name: 'refund_order', arguments: { orderId: '1234' } }]), // billing
  );
  const openaiDir = await mkdtemp(join(tmpdir(), 'baton-quickstart-openai-'));
  try {
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'gpt-test' };
    const out = await runQuickstart(openaiDir, env);
    expect(out).toContain('Models: OpenAI (gpt-test)');
    expect(out).toContain('-> triage hands off to billing (charged twice)');
    expect(out).toContain("|| paused: refund_order needs a human's approval");
    expect(server.requests.map((r) => [r.path, r.body.model])).toEqual([
      ['/v1/chat/completions', 'gpt-test'],
      ['/v1/chat/completions', 'gpt-test'],
    ]);
  } finally {
    await rm(openaiDir, { recursive: true, force: true });
  }
});
