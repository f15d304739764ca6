import { appendFileSync } from 'node:fs';
import { FileStore, tool } from '@baton/core';
import { z } from 'zod';
import { HandoffBuilder } from '../../src/index.js';
import { lastOf, scriptedAgent } from './helpers.js';

/**
 * The nested crash scenario over a FileStore folder: triage hands to `billing`, a workflow
 * (billing-triage → refunds); refunds calls `look_up_order` and `issue_refund` at once, each logging
 * `<tool>:<who>` to `logFile` when it finishes. With `blockRefund`, `issue_refund` never finishes.
 */
export function nestedCrashDesk(directory: string, logFile: string, who: string, blockRefund: boolean) {
  const make = (name: string, block: boolean) =>
    tool({
      name,
      description: `${name}.`,
      parameters: z.object({}),
      execute: async () => {
        if (block) await new Promise((resolve) => setTimeout(resolve, 600_000));
        appendFileSync(logFile, `${name}:${who}\n`);
        return `${name} done`;
      },
    });
  const refunds = scriptedAgent(
    'refunds',
    (request) =>
      lastOf(request)?.role === 'user'
        ? {
            toolCalls: [
              { id: 'look', name: 'look_up_order', arguments: {} },
              { id: 'refund', name: 'issue_refund', arguments: {} },
            ],
          }
        : {
            text: `Refunded: ${request.messages
              .filter((m) => m.role === 'tool')
              .map((m) => m.content)
              .join(', ')}`,
          },
    [make('look_up_order', false), make('issue_refund', blockRefund)],
  );
  const billingTriage = scriptedAgent('billing-triage', () => ({
    toolCalls: [{ name: 'handoff_to_refunds', arguments: {} }],
  }));
  const billing = new HandoffBuilder({ name: 'billing' })
    .participants(billingTriage, refunds)
    .coordinator(billingTriage)
    .build();
  const triage = scriptedAgent('triage', (request) =>
    lastOf(request)?.role === 'user'
      ? { toolCalls: [{ name: 'handoff_to_billing', arguments: {} }] }
      : { text: 'Anything else?' },
  );
  const store = new FileStore({ directory });
  const workflow = new HandoffBuilder({ name: 'desk' })
    .participants(triage, billing.asExecutor())
    .coordinator(triage)
    .store(store)
    .build();
  return { workflow, store, triage, billingTriage, refunds };
}
