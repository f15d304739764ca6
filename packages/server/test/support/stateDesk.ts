import { agent, type Store, tool } from '@baton/core';
import { ScriptedModel } from '@baton/core/testing';
import { HandoffBuilder, type HandoffWorkflow } from '@baton/handoff';
import { z } from 'zod';

/**
 * A desk whose tools change the branch state, for the protocol tests (AG-UI state deltas, MCP):
 * triage hands every customer message to billing; billing says "Let me look that up.", calls
 * `lookup_order` (sets `branch.order`), then offers the refund and calls `refund` (needs approval;
 * appends to `branch.refunds` and marks the order refunded), then answers "All done. …". After the
 * refund, a new message is answered "Anything else?". `refunds` records each refund that ran.
 */
export function stateDesk(store: Store): { workflow: HandoffWorkflow; refunds: string[] } {
  const refunds: string[] = [];
  const lookupOrder = tool({
    name: 'lookup_order',
    description: 'Looks an order up.',
    parameters: z.object({ orderId: z.string() }),
    execute: ({ orderId }, context) => {
      context.state.update('branch', (draft) => {
        draft.order = { id: orderId, amount: 40, status: 'charged twice' };
      });
      return `Order ${orderId}: 40 EUR, charged twice.`;
    },
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: ({ orderId, amount }, context) => {
      refunds.push(`${orderId}:${amount}`);
      context.state.update('branch', (draft) => {
        const list = (draft.refunds ?? []) as { orderId: string; amount: number }[];
        list.push({ orderId, amount });
        draft.refunds = list;
        (draft.order as { status: string }).status = 'refunded';
      });
      return `Refunded ${amount} EUR for order ${orderId}.`;
    },
  });
  const triage = agent({
    name: 'triage',
    description: 'Routes customers.',
    instructions: 'Route.',
    model: new ScriptedModel((request) =>
      request.messages.at(-1)?.role === 'user'
        ? { toolCalls: [{ name: 'handoff_to_billing', arguments: { reason: 'a refund' } }] }
        : { text: 'How else can I help?' },
    ),
  });
  const billing = agent({
    name: 'billing',
    description: 'Refunds and charges.',
    instructions: 'Refund.',
    tools: [lookupOrder, refund],
    model: new ScriptedModel(
      (request) => {
        const lastUser = request.messages.findLastIndex((m) => m.role === 'user');
        const since = request.messages.slice(lastUser + 1);
        const orderId = /\d{3,}/.exec(String(request.messages[lastUser]?.content ?? ''))?.[0] ?? '1234';
        const refunded = since.find((m) => m.role === 'tool' && m.toolName === 'refund');
        if (refunded !== undefined) return { text: `All done. ${refunded.content}` };
        if (since.some((m) => m.role === 'tool' && m.toolName === 'lookup_order')) {
          return { text: 'I can refund 40 EUR.', toolCalls: [{ name: 'refund', arguments: { orderId, amount: 40 } }] };
        }
        if (request.messages.some((m) => m.role === 'tool' && m.toolName === 'refund'))
          return { text: 'Anything else?' };
        return { text: 'Let me look that up.', toolCalls: [{ name: 'lookup_order', arguments: { orderId } }] };
      },
      { chunkSize: 8 },
    ),
  });
  const workflow = new HandoffBuilder({ name: 'desk' })
    .participants(triage, billing)
    .coordinator(triage)
    .store(store)
    .build();
  return { workflow, refunds };
}
