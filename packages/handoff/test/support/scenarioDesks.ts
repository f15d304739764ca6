/**
 * The desks the restore and approval scenarios run on, over any store: the handoff tests use them
 * on FileStore, the cross-package tests in /test on MongoStore. Each call is a fresh "process":
 * new agents (new scripted models) and a new workflow over the given store.
 */
import { type Store, tool } from '@baton/core';
import { z } from 'zod';
import { HandoffBuilder } from '../../src/index.js';
import { deskAgents, lastOf, scriptedAgent } from './helpers.js';

/** Triage hands the user's message to billing; billing asks the user `questions` questions (`Question n?`), then answers `All sorted.`. */
export function askingDesk<TStore extends Store>(store: TStore, questions: number) {
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user'
      ? { toolCalls: [{ id: 'to_billing', name: 'handoff_to_billing', arguments: { reason: 'a charge' } }] }
      : { text: 'Anything else?' },
  );
  const billing = scriptedAgent('billing', (request) => {
    const answers = request.messages.filter((m) => m.role === 'tool' && m.toolName === 'request_user_input').length;
    if (answers < questions)
      return {
        toolCalls: [
          { id: `ask_${answers + 1}`, name: 'request_user_input', arguments: { prompt: `Question ${answers + 1}?` } },
        ],
      };
    return { text: 'All sorted.' };
  });
  const workflow = new HandoffBuilder({ name: 'desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(store)
    .build();
  return { workflow, billing, store };
}

/**
 * Billing's `refund` tool needs a human's approval; `refunds` records each real run. With `askToo`,
 * billing also asks the user a question in the same step (`ask_1`, before `refund_1`).
 */
export function approvalDesk<TStore extends Store>(store: TStore, refunds: string[], askToo = false) {
  const refund = tool({
    name: 'refund',
    description: 'Refunds an amount to the customer.',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      refunds.push(`refund ${amount}`);
      return `Refunded ${amount} EUR.`;
    },
  });
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user'
      ? { toolCalls: [{ id: 'to_billing', name: 'handoff_to_billing', arguments: {} }] }
      : { text: '?' },
  );
  const billing = scriptedAgent(
    'billing',
    (request) => {
      if (lastOf(request)?.role === 'user') {
        const calls = [{ id: 'refund_1', name: 'refund', arguments: { amount: 40 } }];
        if (askToo)
          calls.unshift({ id: 'ask_1', name: 'request_user_input', arguments: { prompt: 'Which card?' } } as never);
        return { toolCalls: calls };
      }
      const results = request.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      return { text: `Done: ${results.join(' | ')}` };
    },
    [refund],
  );
  const workflow = new HandoffBuilder().participants(triage, billing).store(store).build();
  return { workflow, store, billing };
}

/** Triage hands every user message to billing, which answers `Answer to: <text>`; each turn starts at triage. */
export function answeringDesk<TStore extends Store>(store: TStore) {
  const { triage, billing } = deskAgents();
  const workflow = new HandoffBuilder({ name: 'desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .returnTo('coordinator')
    .store(store)
    .build();
  return { workflow, billing, store };
}

/**
 * One `helper` agent that looks each user message up (a 15 ms tool) before answering
 * `answer (found <text>)`, so two turns would overlap without a lock; a user message `transfer me`
 * makes it call a handoff tool it does not have. `configure` adjusts the builder before `build()`.
 */
export function lookUpDesk(
  store: Store,
  configure: (builder: HandoffBuilder) => HandoffBuilder = (builder) => builder,
) {
  const lookUp = tool({
    name: 'look_up',
    description: 'Looks the question up.',
    parameters: z.object({ q: z.string() }),
    execute: async ({ q }) => {
      await new Promise((resolve) => setTimeout(resolve, 15));
      return `found ${q}`;
    },
  });
  const helper = scriptedAgent(
    'helper',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'user' && last.content === 'transfer me')
        return { toolCalls: [{ name: 'handoff_to_nobody', arguments: {} }] };
      return last?.role === 'user'
        ? { toolCalls: [{ name: 'look_up', arguments: { q: last.content } }] }
        : { text: `answer (${last?.content})` };
    },
    [lookUp],
  );
  return configure(new HandoffBuilder().participants(helper).store(store)).build();
}
