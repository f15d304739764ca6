import { agent, type Executor, type ModelMessage, type Store, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';
import { z } from 'zod';

/** Refunds the tool really made, across restarts of the workflow (the test's ledger). */
export type RefundLedger = number[];

/** A billing agent whose `refund` needs approval; it answers from what it is sent, so a restarted copy goes on. */
export function billingAgent(ledger: RefundLedger) {
  const refund = tool({
    name: 'refund',
    description: 'Refunds an amount in EUR.',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }) => {
      ledger.push(amount);
      return `Refunded ${amount} EUR.`;
    },
  });
  const model = new ScriptedModel((request) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool' && last.toolName === 'refund')
      return { text: last.content.startsWith('Refunded') ? `Done: ${last.content}` : `No refund: ${last.content}` };
    return { toolCalls: [{ name: 'refund', arguments: { amount: 40 } }] };
  });
  return agent({
    name: 'billing',
    description: 'Refunds, charges, invoices.',
    instructions: 'Resolve billing.',
    model,
    tools: [refund],
  });
}

/** A triage coordinator: hands "charged twice" to billing, answers anything else itself. */
export function triageAgent() {
  const model = new ScriptedModel((request) => {
    const said = lastUser(request.messages);
    if (/charged twice/i.test(said) && !request.messages.some((m) => m.toolName === 'handoff_to_billing')) {
      return { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'double charge' } }] };
    }
    return { text: `Triage here: you said ${JSON.stringify(said)}. Refunds show within 5 days.` };
  });
  return agent({ name: 'triage', description: 'Greets and routes.', instructions: 'Route the customer.', model });
}

/** The support desk of the tests: triage and a billing specialist (local, or any executor such as an A2A one). */
export function refundDesk(
  store: Store,
  billing: Executor | ReturnType<typeof billingAgent>,
  name = 'support-desk',
): HandoffWorkflow {
  const triage = triageAgent();
  return new HandoffBuilder({ name }).participants(triage, billing).coordinator(triage).store(store).build();
}

/** A billing desk alone (the remote agent of the executor test). */
export function billingDesk(store: Store, ledger: RefundLedger): HandoffWorkflow {
  return new HandoffBuilder({ name: 'billing-desk' }).participants(billingAgent(ledger)).store(store).build();
}

function lastUser(messages: readonly ModelMessage[]): string {
  return messages.findLast((m) => m.role === 'user')?.content ?? '';
}
