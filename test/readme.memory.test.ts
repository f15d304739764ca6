/**
 * packages/memory/README.md's example works as written: `examples/readmeMemoryExample.ts` is that
 * code block, character for character (checked here), and it runs unchanged against a real HTTP server
 * on 127.0.0.1 that speaks OpenAI's Chat Completions wire format (`OPENAI_BASE_URL` points the
 * example's `OpenAIChatModel` at it): the first session's episode is saved on close and recalled in
 * the second session, the idle sweep runs, and the tool-call audit lists the handoff.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, expect, test, vi } from 'vitest';
import { reply, startOpenAIServer } from '../packages/core/test/support/openaiServer.js';

const readmeUrl = new URL('../packages/memory/README.md', import.meta.url);
const exampleUrl = new URL('./examples/readmeMemoryExample.ts', import.meta.url);

afterEach(() => {
  vi.unstubAllEnvs();
});

test('the memory README example is the file the test runs', async () => {
  const readme = await readFile(readmeUrl, 'utf8');
  const section = readme.indexOf('\n## Example');
  expect(section, 'the README has an "## Example" section').toBeGreaterThan(-1);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(section))?.[1];
  expect(await readFile(exampleUrl, 'utf8')).toBe(block);
});

test('running it saves the first session as an episode and recalls it in the second', async () => {
  await using server = await startOpenAIServer();
  server.enqueue(
    reply.toolCalls([{ name: 'handoff_to_billing', arguments: { reason: 'double charge' } }]), // triage, chat-81
    reply.text('I refunded the second charge on order 1234.'), // billing, chat-81
    reply.text('Your refund for order 1234 was issued when we last spoke.'), // triage, chat-90
  );
  vi.stubEnv('OPENAI_BASE_URL', server.baseURL);
  vi.stubEnv('OPENAI_API_KEY', 'sk-test');
  const printed: unknown[][] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    printed.push(args);
  });
  try {
    await import('./examples/readmeMemoryExample.js');
  } finally {
    log.mockRestore();
  }

  expect(server.pendingReplies).toBe(0);
  expect(server.requests).toHaveLength(3);
  const types = printed.map(([first]) => first);
  expect(types).not.toContain('error');
  expect(types.filter((t) => t === 'turn.completed')).toHaveLength(2);

  // The second session's model input carries chat-81's episode as recalled context, and only there.
  const inputText = (n: number) => JSON.stringify(server.requests[n]!.body.messages);
  expect(inputText(0)).not.toContain('chat-81');
  expect(inputText(2)).toContain('Conversation chat-81');
  expect(inputText(2)).toContain('I was charged twice for order 1234');

  // The audit line of chat-81's one tool call: name, succeeded, duration in ms.
  expect(printed.at(-1)).toEqual(['handoff_to_billing', true, expect.any(Number)]);
});
