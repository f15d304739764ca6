/**
 * The root README's "A small example" works as written: `examples/readmeExample.ts` is that code
 * block, character for character (checked here, so the two cannot drift), and running it prints
 * what the README promises: a handoff to billing, a refund that waits for a human, runs once approved,
 * and a closed session.
 */
import { readFile } from 'node:fs/promises';
import { expect, test, vi } from 'vitest';
import { codeBlockAfter } from './support/readmeCode.js';

const exampleUrl = new URL('./examples/readmeExample.ts', import.meta.url);

test('the README example is the file the test runs, and stays about 30 lines', async () => {
  const block = await codeBlockAfter(new URL('../README.md', import.meta.url), '## A small example', 'ts');
  expect(await readFile(exampleUrl, 'utf8')).toBe(block);
  expect(block.trimEnd().split('\n').length).toBeLessThanOrEqual(35);
});

test('running the README example prints the handoff, the approval request, the refund after approval and a closed session', async () => {
  const printed: unknown[][] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    printed.push(args);
  });
  try {
    await import('./examples/readmeExample.js');
  } finally {
    log.mockRestore();
  }

  // What it printed, in order: event types of the first turn, the pending request, event types of
  // the approval's turn, the transcript (role, agent, text or tool names), then the session status.
  const approvalAt = printed.findIndex(([first]) => typeof first === 'object' && first !== null);
  expect(approvalAt).toBeGreaterThan(0);
  const transcriptAt = printed.findIndex(([first]) => first === 'user');
  expect(transcriptAt).toBeGreaterThan(approvalAt);
  const firstTurn = printed.slice(0, approvalAt).map(([type]) => type);
  const secondTurn = printed.slice(approvalAt + 1, transcriptAt).map(([type]) => type);
  // message, message.delta, model.started/completed and checkpoint events are printed too; the order of the rest is the story.
  const story = (types: unknown[]) =>
    types.filter(
      (t) =>
        typeof t === 'string' &&
        !['message', 'message.delta', 'model.started', 'model.completed', 'checkpoint'].includes(t),
    );

  expect(firstTurn).not.toContain('error');
  expect(story(firstTurn)).toEqual([
    'turn.started',
    'agent.started', // triage
    'tool.call', // handoff_to_billing
    'tool.result',
    'handoff',
    'agent.started', // billing
    'tool.call', // refund_order: needs approval, so no result yet
    'request',
    'turn.completed',
  ]);
  expect(printed[approvalAt]).toEqual([
    expect.objectContaining({
      type: 'tool_approval',
      agent: 'billing',
      toolName: 'refund_order',
      arguments: '{"orderId":"1234"}',
    }),
  ]);

  expect(secondTurn).not.toContain('error');
  expect(secondTurn).toContain('message.delta'); // billing's "Refunded." streamed
  expect(story(secondTurn)).toEqual(['turn.started', 'agent.started', 'tool.call', 'tool.result', 'turn.completed']);

  expect(printed.slice(transcriptAt)).toEqual([
    ['user', '-', 'I was charged twice for order 1234'],
    ['assistant', 'triage', 'handoff_to_billing'],
    ['tool', 'triage', 'Transferred to billing.'],
    ['assistant', 'billing', 'refund_order'],
    ['tool', 'billing', '{"orderId":"1234","refunded":true}'], // the refund ran, once, after the approval
    ['assistant', 'billing', 'Refunded.'],
    ['closed'],
  ]);
});
