/**
 * packages/memory/README.md's semantic memory example works as written: `examples/readmeSemanticMemoryExample.ts`
 * is that code block, character for character (checked here), and it runs unchanged against a real
 * HTTP server on 127.0.0.1 speaking OpenAI's Chat Completions wire format: billing's model input
 * carries the tenant's and the shared refund documents, triage's none.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, expect, test, vi } from 'vitest';
import { reply, startOpenAIServer } from '../packages/core/test/support/openaiServer.js';

const readmeUrl = new URL('../packages/memory/README.md', import.meta.url);
const exampleUrl = new URL('./examples/readmeSemanticMemoryExample.ts', import.meta.url);

afterEach(() => {
  vi.unstubAllEnvs();
});

test('the semantic memory README example is the file the test runs', async () => {
  const readme = await readFile(readmeUrl, 'utf8');
  const section = readme.indexOf('\n## Semantic memory');
  expect(section, 'the README has a "## Semantic memory" section').toBeGreaterThan(-1);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(section))?.[1];
  expect(await readFile(exampleUrl, 'utf8')).toBe(block);
});

test("running it gives billing the tenant's knowledge and triage none", async () => {
  await using server = await startOpenAIServer();
  server.enqueue(
    reply.toolCalls([{ name: 'handoff_to_billing', arguments: { reason: 'double charge' } }]), // triage
    reply.text('Acme refunds the duplicate charge today.'), // billing
  );
  vi.stubEnv('OPENAI_BASE_URL', server.baseURL);
  vi.stubEnv('OPENAI_API_KEY', 'sk-test');
  const printed: unknown[][] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    printed.push(args);
  });
  try {
    await import('./examples/readmeSemanticMemoryExample.js');
  } finally {
    log.mockRestore();
  }
  expect(server.pendingReplies).toBe(0);
  expect(printed).toEqual([['Acme refunds the duplicate charge today.']]);
  const inputText = (n: number) => JSON.stringify(server.requests[n]!.body.messages);
  expect(inputText(0)).not.toContain('refunded to the card');
  expect(inputText(1)).toContain('Acme refunds a duplicate charge the same day.');
  expect(inputText(1)).toContain('refunded to the card within 3-5 business days');
  expect(inputText(1)).not.toContain('Invoices are emailed');
});
