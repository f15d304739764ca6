import { agent, type Store } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';

/**
 * The classic handoff turn the benches measure: the coordinator `triage` hands off to `billing`
 * (handoff call ids unique per workflow), which answers; two instant `ScriptedModel` calls that keep
 * no record, so the time measured is Baton's own. Used by `handoff.bench.ts` and `turnCpu.ts`.
 *
 * @param store where the workflow's sessions live
 * @returns a workflow named `bench`
 * @example
 * ```ts
 * const session = await handoffDesk(new InMemoryStore()).session({ id: 's-1' });
 * for await (const _ of session.send('hi')) {} // one handoff turn
 * ```
 */
export function handoffDesk(store: Store): HandoffWorkflow {
  let handoffs = 0;
  const triage = agent({
    name: 'triage',
    description: 'Routes customers to specialists.',
    instructions: 'Route the customer.',
    model: new ScriptedModel(
      (request) =>
        request.messages.at(-1)?.role === 'user'
          ? { toolCalls: [{ id: `h${++handoffs}`, name: 'handoff_to_billing', arguments: { reason: 'billing' } }] }
          : { text: 'Anything else?' },
      { record: false },
    ),
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds, charges, invoices.',
    instructions: 'Resolve billing questions.',
    model: new ScriptedModel(() => ({ text: 'Your refund of 40 EUR is on its way.' }), { record: false }),
  });
  return new HandoffBuilder({ name: 'bench' }).participants(triage, billing).coordinator(triage).store(store).build();
}
