import { ConfigurationError, InMemoryStore, type Store, tool } from '@baton/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HandoffBuilder } from '../src/index.js';
import {
  collect,
  danglingToolCalls,
  disposeStores,
  embeddedStores,
  lastOf,
  ofType,
  scriptedAgent,
} from './support/helpers.js';

/**
 * One "process": a support desk whose `billing` participant is itself a workflow (billing-triage →
 * refunds / invoices). Refunds asks the user for the order, then issues the refund, which needs a
 * human's approval. `ledger` records each real refund.
 */
function nestedDesk(store: Store, ledger: string[]) {
  const issueRefund = tool({
    name: 'issue_refund',
    description: 'Refunds an order.',
    parameters: z.object({ order: z.string() }),
    needsApproval: true,
    execute: ({ order }) => {
      ledger.push(order);
      return `Refund issued for order ${order}.`;
    },
  });
  const billingTriage = scriptedAgent('billing-triage', (request) => {
    const said = request.messages.findLast((m) => m.role === 'user')?.content ?? '';
    return {
      toolCalls: [
        {
          name: said.includes('invoice') ? 'handoff_to_invoices' : 'handoff_to_refunds',
          arguments: { reason: 'routing' },
        },
      ],
    };
  });
  const refunds = scriptedAgent(
    'refunds',
    (request) => {
      const last = lastOf(request);
      if (last?.role === 'user')
        return { toolCalls: [{ name: 'request_user_input', arguments: { prompt: 'Which order?' } }] };
      if (last?.role === 'tool' && last.toolName === 'request_user_input')
        return { toolCalls: [{ name: 'issue_refund', arguments: { order: last.content } }] };
      return { text: `Done: ${last?.content ?? ''}` };
    },
    [issueRefund],
  );
  const invoices = scriptedAgent('invoices', () => ({ text: 'Your invoice is on its way.' }));
  const billing = new HandoffBuilder({ name: 'billing' })
    .participants(billingTriage, refunds, invoices)
    .coordinator(billingTriage)
    .handoffs(billingTriage, [refunds, invoices])
    .build();
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user'
      ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] }
      : { text: 'Anything else?' },
  );
  const desk = new HandoffBuilder({ name: 'support-desk' })
    .participants(triage, billing.asExecutor())
    .coordinator(triage)
    .store(store)
    .build();
  return { desk, refunds, billingTriage };
}

describe.each(embeddedStores())('workflow.asExecutor() on %s', (_name, makeStore) => {
  afterAll(disposeStores);

  it('runs the inner workflow inside the outer turn; its requests are answered through the outer session, across a restart', async () => {
    const store = await makeStore();
    const ledger: string[] = [];
    const first = nestedDesk(store, ledger);
    const session = await first.desk.session({ id: 'nested-1' });

    const opened = await collect(session.send('I was charged twice'));
    expect(ofType(opened, 'handoff').map((e) => `${e.from}->${e.to}`)).toEqual([
      'triage->billing',
      'billing-triage->refunds',
    ]);
    const [question] = session.pendingRequests;
    expect(question).toMatchObject({ type: 'user_input', agent: 'refunds', prompt: 'Which order?' });

    const asked = await collect(session.respond(question!.id, '1234'));
    expect(asked.at(-1)).toMatchObject({ type: 'turn.completed' });
    const [approval] = session.pendingRequests;
    expect(approval).toMatchObject({
      type: 'tool_approval',
      agent: 'refunds',
      toolName: 'issue_refund',
      arguments: '{"order":"1234"}',
    });
    expect(ledger).toEqual([]);

    // A restart while paused: new agents, new workflows, the same store.
    const second = nestedDesk(store, ledger);
    const restored = await second.desk.session({ id: 'nested-1' });
    expect(restored.pendingRequests.map((r) => r.id)).toEqual([approval!.id]);
    const approved = await collect(restored.respond(approval!.id, { approved: true }));
    expect(ledger).toEqual(['1234']);
    expect(second.billingTriage.model.requests).toHaveLength(0); // the inner routing was derived, not re-run
    expect(approved.at(-1)).toMatchObject({ type: 'turn.completed', nextAgent: 'triage' });
    const reply = ofType(approved, 'message').at(-1)!.message;
    expect(reply).toMatchObject({
      role: 'assistant',
      agent: 'refunds',
      content: 'Done: Refund issued for order 1234.',
    });

    // A second turn enters the inner workflow at its coordinator again, which routes to invoices.
    const next = await collect(restored.send('Please send my invoice'));
    expect(ofType(next, 'handoff').map((e) => `${e.from}->${e.to}`)).toEqual([
      'triage->billing',
      'billing-triage->invoices',
    ]);
    expect(ofType(next, 'message').at(-1)!.message).toMatchObject({
      agent: 'invoices',
      content: 'Your invoice is on its way.',
    });

    // One copy: every inner message is stored once, in the outer session, and nothing dangles.
    const stored = await store.readMessages('nested-1', 'main');
    expect(stored.map((m) => m.id)).toEqual(restored.messages.map((m) => m.id));
    expect(new Set(stored.map((m) => m.id)).size).toBe(stored.length);
    expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'I was charged twice',
      'Please send my invoice',
    ]);
    expect(danglingToolCalls(stored)).toEqual([]);
    expect(await store.getSession('billing')).toBeUndefined();
  });
});

describe("workflow.asExecutor() and the inner workflow's own session options", () => {
  const inner = () =>
    new HandoffBuilder({ name: 'billing' }).participants(scriptedAgent('refunds', () => ({ text: 'ok' })));

  it('refuses, when it is nested, a workflow built with a store, checkpoints or other session options, naming them', () => {
    const withStore = inner().store(new InMemoryStore()).checkpoints({ every: 'step' }).build();
    expect(() => withStore.asExecutor()).toThrow(ConfigurationError);
    expect(() => withStore.asExecutor()).toThrow(/built with store\(\), checkpoints\(\)/);
    const autonomous = inner().autonomous({ maxTurns: 2 }).handoffHistory('keep').build();
    expect(() => autonomous.asExecutor()).toThrow(/autonomous\(\), handoffHistory\(\)/);
    const remembering = inner().memory({ name: 'memory' }).build();
    expect(() => remembering.asExecutor()).toThrow(/memory\(\)\/contextProviders\(\)/);
  });

  it('nests a workflow without session options; it still runs on its own with its defaults', async () => {
    const plain = inner().build();
    expect(plain.asExecutor().name).toBe('billing');
    expect((await plain.run('hello')).output).toBe('ok');
  });
});
